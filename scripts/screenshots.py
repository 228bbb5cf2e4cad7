"""The README's screenshots: the built page in Debian's headless Chromium, on a desktop
(1440x900) and a phone (390x844), light and dark, each a first screen with an answer streaming.

    python3 scripts/screenshots.py [--out docs]

Writes docs/screenshot-{desktop,phone}-{light,dark}.png (PNG, palette-quantised when Pillow is
installed, to keep the repository small).
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import build  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, loopback_url, serving  # noqa: E402

READY = '[data-testid="engine-status"][data-state="ready"]'

#: The set-up shown: a popular card and model (thinking off), a paragraph-long prompt and the
#: document answer (headings, lists and bold text rendered as they stream).
QUERY = "?hw=rtx-3090&model=qwen3-14b&think=0&prompt=150&answer=document"
SCREENS = {"desktop": {"viewport": {"width": 1440, "height": 900}}, "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 1}}
#: Seconds of streaming before the picture, so the answer box holds some rendered text.
STREAM_S = 2.5


def shrink(path: Path) -> None:
    """Quantise to a 256-colour palette if Pillow is there (a 1440x900 UI shot drops ~3x)."""
    try:
        from PIL import Image
    except ImportError:
        return
    image = Image.open(path).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        site = build.build(Path(folder) / "dist")
        handler = functools.partial(type("H", (build.QuietHandler,), {"log_message": lambda *a: None}), directory=str(site))
        with serving(handler) as server, sync_playwright() as playwright:
            url = loopback_url(server) + "/"
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for screen, options in SCREENS.items():
                for scheme in ("light", "dark"):
                    context = browser.new_context(color_scheme=scheme, reduced_motion="reduce", **options)
                    page = context.new_page()
                    page.goto(url + QUERY)
                    page.wait_for_selector(READY, timeout=120_000)
                    page.wait_for_function("() => window.__tokfeel.settled()", timeout=120_000)
                    # Clicked from script, so the page stays at its first screen.
                    page.evaluate("() => document.querySelector('[data-testid=\"run\"]').click()")
                    page.wait_for_timeout(int(STREAM_S * 1000))
                    page.evaluate("() => scrollTo(0, 0)")
                    path = args.out / f"screenshot-{screen}-{scheme}.png"
                    page.screenshot(path=str(path))
                    shrink(path)
                    print(f"{path}: {path.stat().st_size // 1024} KB")
                    context.close()
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
