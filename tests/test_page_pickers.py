"""The pickers offer what the chosen device can run (issue 14): formats, engines and KV cache
types that cannot run there sit behind "show all", each with its reason; custom hardware names
its backend and whether its memory is unified, and shows the CPU's own fields for a CPU only."""

from __future__ import annotations

import pytest

from engine.page.view import estimate_view
from pagekit import page_view, query, settle, show

pytestmark = pytest.mark.browser

OPTIONS = "els => els.map(e => [e.value, e.textContent, e.dataset.runs || ''])"


def options(page, selector: str) -> list[tuple[str, str, str]]:
    return [tuple(o) for o in page.eval_on_selector_all(f"{selector} option", OPTIONS)]


def set_show_all(page, on: bool) -> None:
    box = page.locator('[data-testid="show-all"]')
    if box.is_checked() != on:
        box.click()


def test_an_nvidia_card_is_offered_no_mlx_format_until_show_all(app):
    page, _log, _console = app
    show(page, query(hw="rtx-3060-12gb", model="llama-3.1-8b", quant="Q4_K_M"))
    set_show_all(page, False)
    quants = options(page, '[data-testid="quant-select"]')
    names = [value for value, _text, _runs in quants]
    assert names[:4] == ["Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0"] or names.index("Q4_K_M") < names.index("Q8_0")
    assert not [n for n in names if n.startswith("MLX-")], names
    assert "hidden" in page.inner_text('[data-testid="runs-note"]')
    # KV caches and engines too: no MLX/TurboQuant cache, no Mac-only engine, no catch-all.
    kvs = [value for value, _t, _r in options(page, '[data-testid="kv-select"]')]
    assert "q8_0" in kvs and "mlx-2bit" not in kvs and "tq3.5" not in kvs
    engines = [value for value, _t, _r in options(page, '[data-testid="engine-select"]')]
    assert "llama-cpp" in engines and "omlx" not in engines and "vllm-mlx" not in engines and "other" not in engines

    set_show_all(page, True)
    quants = {value: (text, runs) for value, text, runs in options(page, '[data-testid="quant-select"]')}
    text, runs = quants["MLX-4bit"]
    assert runs == "no" and "MLX formats run on Apple Silicon (Metal) only" in text
    kv_text = dict((v, t) for v, t, _r in options(page, '[data-testid="kv-select"]'))["mlx-2bit"]
    assert "Apple Silicon (Metal)" in kv_text
    engine_text = dict((v, t) for v, t, _r in options(page, '[data-testid="engine-select"]'))["omlx"]
    assert "runs on Apple Silicon (Metal) only" in engine_text

    # Choosing it anyway: the engine's clear refusal, no speed.
    page.select_option('[data-testid="quant-select"]', "MLX-4bit")
    page.wait_for_function("() => location.search.includes('quant=MLX-4bit')")
    settle(page)
    error = page.locator('[data-testid="form-error"]')
    assert "run only on metal" in error.inner_text()
    assert not page.get_attribute('.results [data-testid="decode-tps"]', "data-value")
    # Show all off again: the current choice stays listed, marked as not running here.
    set_show_all(page, False)
    current = {value: runs for value, _t, runs in options(page, '[data-testid="quant-select"]')}
    assert current["MLX-4bit"] == "no" and "MLX-8bit" not in current


def test_a_mac_is_offered_mlx_formats_and_caches(app):
    page, _log, _console = app
    show(page, query(hw="apple-m3-max-40c-64gb", model="llama-3.1-8b", quant="MLX-4bit"))
    set_show_all(page, False)
    names = [value for value, _t, _r in options(page, '[data-testid="quant-select"]')]
    assert "MLX-4bit" in names and "Q4_K_M" in names and "AWQ-4bit" not in names
    kvs = [value for value, _t, _r in options(page, '[data-testid="kv-select"]')]
    assert "mlx-4bit" in kvs and "tq3.5" in kvs and "fp8" not in kvs


def test_kv_types_follow_the_engine_not_only_the_backend(app):
    """engines.toml states each engine's KV cache types: on one CUDA card llama.cpp offers q8_0 and
    no fp8, vLLM fp8 and no q8_0 (the picker once offered every type some CUDA engine has)."""
    page, _log, _console = app
    show(page, query(hw="rtx-4090", model="llama-3.1-8b", quant="Q4_K_M"))
    set_show_all(page, False)
    kvs = [value for value, _t, _r in options(page, '[data-testid="kv-select"]')]
    assert "q8_0" in kvs and "fp8" not in kvs
    show(page, query(hw="rtx-4090", model="llama-3.1-8b", quant="AWQ-4bit", engine="vllm"))
    set_show_all(page, False)
    kvs = [value for value, _t, _r in options(page, '[data-testid="kv-select"]')]
    assert "fp8" in kvs and "q8_0" not in kvs
    set_show_all(page, True)
    text = dict((v, t) for v, t, _r in options(page, '[data-testid="kv-select"]'))["q8_0"]
    assert "vLLM offers" in text


def test_custom_hardware_names_its_backend_and_shows_cpu_fields_for_a_cpu_only(app):
    page, _log, _console = app
    show(page, query(hw="custom", hw_name="Arc B580", hw_mem=12, hw_bw=456, hw_tf=100, model="llama-3.1-8b", quant="Q4_K_M"))
    cpu_fields = page.locator('[data-testid="custom-cpu-fields"]')
    assert cpu_fields.is_hidden()
    page.select_option('[data-testid="custom-hw-backend"]', "sycl")
    page.wait_for_function("() => location.search.includes('hw_backend=sycl')")
    settle(page)
    line = page.inner_text('[data-testid="setup-line"]')
    assert "Intel (SYCL)" in line and "CUDA" not in line and "cuda" not in line
    assert page_view(page)["hw_kind"] == "gpu" and cpu_fields.is_hidden()

    # Unified memory makes it a chip with one memory (kind soc).
    page.locator('[data-testid="custom-hw-unified"]').check()
    page.wait_for_function("() => location.search.includes('hw_kind=soc')")
    settle(page)
    assert page_view(page)["hw_backend"] == "sycl"

    # The CPU backend: a CPU, its own fields shown, the unified box gone.
    page.select_option('[data-testid="custom-hw-backend"]', "cpu")
    page.wait_for_function("() => location.search.includes('hw_kind=cpu')")
    settle(page)
    assert cpu_fields.is_visible() and page.locator('[data-testid="custom-hw-unified"]').is_hidden()
    assert page_view(page)["hw_backend"] == ""  # the cpu kind's usual backend stays unset
    assert "CPU" in page.inner_text('[data-testid="setup-line"]')


def test_one_size_unit_and_plain_words_first(app):
    """Sizes in GiB, GB in the tooltip: a 24 GiB card never reads as having more (issue 14: "25.4 GB
    usable" did); the speeds say what they are before their terms; the context is split into your
    prompt and the conversation so far."""
    import re

    page, _log, _console = app
    view = show(page, query(hw="rtx-4090", model="llama-3.1-8b", quant="Q4_K_M"))
    summary = page.locator("#memory-summary")
    needed, usable = (float(x) for x in re.fullmatch(r"([0-9.]+) GiB of ([0-9.]+) GiB usable", summary.inner_text().strip()).groups())
    expected = estimate_view(view)["estimate"]["memory"]
    assert usable == pytest.approx(expected["usable_gb"] * 1e9 / 2**30, abs=0.06) and usable < 24
    assert needed == pytest.approx(expected["total_gb"] * 1e9 / 2**30, abs=0.06)
    assert "GB (10^9 bytes)" in summary.get_attribute("title")
    results = page.inner_text('[data-panel="results"]')
    assert " GB" not in results.replace("GB/s", "")
    results = results.lower()  # the labels are set in capitals by the style sheet
    assert "writing speed" in results and "(decode)" in results and "reading speed" in results and "(prefill)" in results
    assert "Your prompt" in page.text_content('label[for="prompt-tokens"]')
    assert "Conversation so far" in page.text_content('label[for="depth-tokens"]')
