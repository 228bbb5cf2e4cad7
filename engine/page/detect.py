"""This computer: what the browser reports of its GPU, mapped to a catalog device with a confidence.

The page reads the signals on its main thread (site/js/detect.js: the WebGL unmasked renderer and
vendor, WebGPU's adapter info, ``navigator.hardwareConcurrency`` and ``deviceMemory``, the
high-entropy user-agent hints) and sends them here; the rule that turns them into a device lives
only in this module, and the names it matches are the hardware catalog's names and aliases (no
second table).

Confidence (issue 19):

- ``high``: the renderer names one GPU or chip and exactly one catalog entry is it;
- ``partial``: it names a chip the catalog holds in several variants (a Mac's GPU cores and
  memory, a card sold with two memory sizes): the variants are offered, the catalog's choice for
  the bare name first; or the WebGPU adapter contradicts the WebGL one;
- ``low``: a class only, or nothing: Firefox's buckets ("GeForce GTX 980, or similar"), Safari's
  "Apple GPU" (on every Mac), Brave's "Brave" or random strings, software renderers (SwiftShader,
  llvmpipe, the Windows basic render driver) and GPUs the catalog does not hold.

Renderer formats (public references): Chrome/Edge/Brave print ANGLE strings, "ANGLE (vendor,
device (0x<PCI id>) Direct3D11 vs_5_0 ps_5_0, D3D11)" on Windows, "ANGLE (Apple, ANGLE Metal
Renderer: Apple M2 Pro, Unspecified Version)" on macOS, "ANGLE (vendor, Vulkan 1.3.x (device
(0x<PCI id>)), driver)" or an OpenGL renderer string on Linux; Firefox reduces the renderer to a
representative of a class and appends ", or similar" (mozilla-central
dom/canvas/SanitizeRenderer.cpp and its gtest); Brave's fingerprinting protection answers "Brave"
or eight random characters (github.com/brave/brave-browser issues 10214, 55443).
"""

from __future__ import annotations

import re
from functools import cache

from ..catalog import normalise_name
from ..errors import EngineInputError
from ..resolve import NOISE_WORDS

#: Longest signal text accepted (real renderer strings are under 200 characters).
MAX_SIGNAL_LENGTH = 400
#: Words of a renderer string that say nothing about which device it is.
DETECT_NOISE = NOISE_WORDS | frozenset({"gpu", "graphics", "corporation", "inc", "r", "tm"})
#: Words in a catalog name that only tell variants of one chip apart (GPU cores, memory size).
VARIANT_WORD = re.compile(r"^(\d+|\d+(gb|c)|core|cores|cpu)$")
#: Renderers that are no device at all: software rasterisers and virtual-machine adapters.
SOFTWARE = re.compile(r"swiftshader|llvmpipe|softpipe|lavapipe|basic render driver|virgl|svga3d|virtualbox|vmware|parallels|microsoft remote", re.I)
#: Integrated GPUs the browser may draw with on a laptop that also has a separate one.
INTEGRATED = re.compile(r"\b(?:uhd|iris|hd) graphics|\bradeon(?: \d{3,4}m| vega \d+)? graphics\b|\bradeon \d{3}m\b|\bintel\b(?!.*\barc\b)", re.I)
#: GPU vendors as WebGPU's adapter.info names them, by the catalog's vendor ids.
VENDOR_WORDS = {"nvidia": "nvidia", "amd": "amd", "ati": "amd", "advanced micro devices": "amd", "intel": "intel", "apple": "apple", "qualcomm": "qualcomm"}


def _text(value, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EngineInputError(f"{field} must be text", field=field)
    if len(value) > MAX_SIGNAL_LENGTH:
        raise EngineInputError(f"{field} is longer than {MAX_SIGNAL_LENGTH} characters", field=field)
    return value.strip()


def _number(value, field: str, hi: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= hi:
        raise EngineInputError(f"{field} must be a number in (0, {hi:g}]", field=field)
    return float(value)


def _top_level_parts(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses ("a, b (c, d), e" -> a / b (c, d) / e)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def parse_renderer(renderer: str) -> dict:
    """The device name and PCI id inside a WebGL renderer string.

    ``"ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)"`` ->
    ``{"device": "NVIDIA GeForce RTX 3060", "pci_id": "0x2504", "api": "D3D11"}``.
    """
    text = renderer.strip()
    api = ""
    angle = re.fullmatch(r"ANGLE \((.*)\)", text, flags=re.S)
    if angle:
        parts = _top_level_parts(angle.group(1))
        text = parts[1] if len(parts) > 1 else parts[0]
        api = ", ".join(parts[2:])
    text = re.sub(r"^ANGLE [\w ]+ Renderer: ", "", text)
    vulkan = re.fullmatch(r"Vulkan [\d.]+ \((.*)\)", text)
    if vulkan:
        text, api = vulkan.group(1), "Vulkan"
    pci = re.search(r"\(0x([0-9A-Fa-f]{4,8})\)", text)
    text = text[: pci.start()] + text[pci.end():] if pci else text
    text = re.sub(r"\((?:R|TM)\)", " ", text)
    text = re.sub(r"\s+(?:Direct3D\d*|vs_\d_\d|ps_\d_\d)\b.*$", "", text)
    text = re.sub(r"/PCIe?/SSE2$|\s+OpenGL Engine$", "", text)
    text = re.sub(r"^Mesa (?:DRI )?", "", text)
    # Driver details in trailing parentheses: "(radeonsi, navi31, LLVM 15.0.7, ...)", "(KBL GT2)".
    while re.search(r"\s*\([^()]*\)\s*$", text) and not re.fullmatch(r"[^(]*\((?:R|TM)\)\s*", text):
        text = re.sub(r"\s*\([^()]*\)\s*$", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return {"device": text, "pci_id": f"0x{int(pci.group(1), 16):04x}" if pci else "", "api": api}


def _words(text: str) -> frozenset[str]:
    return frozenset(normalise_name(text).split()) - DETECT_NOISE


@cache
def _catalog_names() -> tuple[tuple[str, frozenset[str]], ...]:
    """(device id, words of one of its names) for every name and alias of every device."""
    from ..hardware import load_hardware

    out = []
    for device in load_hardware().values():
        for name in (device.name, *device.aliases):
            out.append((device.id, _words(name)))
    return tuple(out)


def _extra_words(device_name: str) -> dict[str, int]:
    """Catalog device id -> how many variant words its closest name adds to ``device_name``, for
    every entry with a name that holds all of its words and adds only variant words."""
    wanted = _words(device_name)
    extras: dict[str, int] = {}
    if not wanted:
        return extras
    for device_id, words in _catalog_names():
        if wanted <= words and all(VARIANT_WORD.match(w) for w in words - wanted):
            extras[device_id] = min(extras.get(device_id, 99), len(words - wanted))
    return extras


def catalog_matches(device_name: str) -> list[str]:
    """The catalog devices ``device_name`` could be: every entry with a name that holds all of its
    words and adds only variant words (GPU cores, memory sizes), catalog order, the entry the
    catalog gives the bare name first."""
    extras = _extra_words(device_name)
    # The entry whose own name says no more than the renderer is the catalog's choice for the
    # bare name ("Apple M2 Pro" -> its largest configuration): offered first.
    return sorted(extras, key=lambda device_id: extras[device_id] > 0)


def names_the_card(device_name: str, matches: list[str]) -> bool:
    """Whether a name with several catalog matches still names one card: the catalog gives the
    bare name to one entry, and every match is a discrete GPU with the same GPU cores (versions
    that differ in memory size only, like a rare 8 GB RTX 3060 beside the 12 GB one). A chip that
    shares system memory (a Mac, Strix Halo) is sold in configurations: never."""
    from ..hardware import load_hardware

    devices = load_hardware()
    first = devices[matches[0]]
    return (
        _extra_words(device_name).get(first.id) == 0
        and first.gpu_cores is not None
        and all(devices[m].kind == "gpu" and devices[m].gpu_cores == first.gpu_cores for m in matches)
    )


def _vendor_of(text: str) -> str:
    lowered = text.lower()
    for word, vendor in VENDOR_WORDS.items():
        if word in lowered:
            return vendor
    return ""


def _reported(signals: dict) -> str:
    """What the browser said, in words (the hook's text)."""
    parts = []
    if signals["renderer"]:
        parts.append(f"WebGL renderer “{signals['renderer']}”" + (f" (vendor “{signals['vendor']}”)" if signals["vendor"] else ""))
    else:
        parts.append("no WebGL renderer")
    gpu = " ".join(x for x in (signals["gpu_vendor"], signals["gpu_architecture"], signals["gpu_description"]) if x)
    if gpu:
        parts.append(f"WebGPU adapter “{gpu}”")
    if signals["cores"]:
        # Safari reports a clamped count (4 or 8), not the machine's.
        parts.append(f"{signals['cores']:g} logical cores" + (" (Safari's clamped figure)" if signals["renderer"] == "Apple GPU" else ""))
    if signals["memory_gb"]:
        parts.append(f"RAM reported as {signals['memory_gb']:g} GB (a rounded bucket, capped)")
    platform = " ".join(x for x in (signals["platform"], signals["architecture"]) if x)
    if platform:
        parts.append(platform)
    return "; ".join(parts)


def read_signals(args) -> dict:
    if not isinstance(args, dict):
        raise EngineInputError("detect_device takes an object of browser signals")
    return {
        "renderer": _text(args.get("renderer"), "renderer"),
        "vendor": _text(args.get("vendor"), "vendor"),
        "gpu_vendor": _text(args.get("gpu_vendor"), "gpu_vendor"),
        "gpu_architecture": _text(args.get("gpu_architecture"), "gpu_architecture"),
        "gpu_description": _text(args.get("gpu_description"), "gpu_description"),
        "hybrid_vendor": _text(args.get("hybrid_vendor"), "hybrid_vendor"),
        "platform": _text(args.get("platform"), "platform"),
        "architecture": _text(args.get("architecture"), "architecture"),
        "cores": _number(args.get("cores"), "cores", 4096),
        "memory_gb": _number(args.get("memory_gb"), "memory_gb", 4096),
        "mobile": bool(args.get("mobile")),
        "brave": bool(args.get("brave")),
    }


def detect_device(args) -> dict:
    """Browser signals -> {id, confidence, variants, device, pci_id, reported, why, notes}.

    ``id`` is the catalog device (the variant offered first when several fit) or ``"unknown"``.
    """
    from ..hardware import load_hardware

    signals = read_signals(args)
    renderer = signals["renderer"]
    out = {"id": "unknown", "confidence": "low", "variants": [], "device": "", "pci_id": "", "reported": _reported(signals), "why": "", "notes": []}
    if not renderer:
        out["why"] = "The browser reports no GPU (WebGL is off or blocked here)."
        return out
    if "brave" in (renderer.lower(), signals["vendor"].lower()) or re.fullmatch(r"[0-9A-Za-z]{8}", renderer):
        out["why"] = "The browser hides the GPU (Brave's fingerprinting protection answers “Brave” or random letters)."
        return out
    if renderer.endswith(", or similar"):
        out["why"] = "The browser reports only a class of GPU (Firefox replaces the name with a representative “…, or similar”)."
        return out
    if renderer == "Apple GPU":
        out["why"] = "Safari reports “Apple GPU” on every Mac, Apple silicon or Intel, and on iPhones and iPads."
        return out
    if SOFTWARE.search(renderer):
        out["why"] = "The browser draws in software (SwiftShader, llvmpipe or a virtual machine's adapter): no GPU is reported, so nothing is detected."
        return out
    parsed = parse_renderer(renderer)
    out["device"], out["pci_id"] = parsed["device"], parsed["pci_id"]
    integrated = bool(INTEGRATED.search(parsed["device"]))
    matches = catalog_matches(parsed["device"]) if parsed["device"] else []
    devices = load_hardware()
    if integrated and not any(devices[m].kind == "soc" and devices[m].vendor == "apple" for m in matches):
        out["notes"].append("This is an integrated GPU. On a laptop that also has a separate GPU the browser may be drawing with the integrated one: if yours has one, choose it in the hardware picker.")
    if signals["hybrid_vendor"] and signals["hybrid_vendor"] != _vendor_of(parsed["device"] + " " + signals["vendor"]):
        out["notes"].append(f"WebGPU's high-performance adapter is a {signals['hybrid_vendor'].upper() if len(signals['hybrid_vendor']) <= 4 else signals['hybrid_vendor'].title()} GPU: this computer has two GPUs, and the separate one is probably what a local model runs on.")
    if not matches:
        out["why"] = f"“{parsed['device']}” is not in the hardware catalog: choose the closest device yourself."
        return out
    out["variants"] = matches
    out["id"] = matches[0]
    if len(matches) > 1 and names_the_card(parsed["device"], matches):
        out["confidence"] = "high"
        out["why"] = f"The browser names the GPU: {parsed['device']}."
        others = ", ".join(devices[m].name for m in matches[1:])
        out["notes"].append(f"The same card is also sold as {others}: if yours is that one, choose it.")
    elif len(matches) > 1:
        out["confidence"] = "partial"
        out["why"] = f"The browser names the chip, {parsed['device']}, but not which of its {len(matches)} catalogued versions (GPU cores, memory) this is: choose yours."
    else:
        out["confidence"] = "high"
        out["why"] = f"The browser names the GPU: {parsed['device']}."
    gpu_vendor = VENDOR_WORDS.get(signals["gpu_vendor"].lower(), "")
    if gpu_vendor and devices[out["id"]].vendor != gpu_vendor:
        out["confidence"] = "partial" if out["confidence"] == "high" else out["confidence"]
        out["notes"].append(f"WebGPU reports a different GPU vendor ({signals['gpu_vendor']}) than WebGL: confirm which GPU this is.")
    return out
