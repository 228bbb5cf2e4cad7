"""Custom CPU hardware on the page (issue 20): cores, threads, memory channels and speed (the
engine derives the peak bandwidth from them), the ISA and a measured bandwidth reach the request;
the explain panel names the kernel path and the bandwidth the chosen threads can draw."""

from __future__ import annotations

import pytest

from engine.errors import EngineInputError
from engine.page.fields import DEFAULT_VIEW
from engine.page.view import custom_hardware, estimate_view

CPU_VIEW = {**DEFAULT_VIEW, "hw": "custom", "hw_kind": "cpu", "hw_backend": "", "hw_name": "My desktop", "hw_mem": 64, "hw_tf": 1.2,
            "hw_cores": 8, "hw_threads": 16, "hw_ch": 2, "hw_mts": 5600, "hw_isa": "avx512-vnni", "model": "llama-3.1-8b", "quant": "Q4_K_M"}


def test_channels_and_speed_give_the_peak_through_the_engine():
    spec = custom_hardware(CPU_VIEW)
    assert "bandwidth_gbs" not in spec  # the page does not compute it: the engine does, from these
    assert (spec["memory_channels"], spec["memory_data_rate_mts"], spec["cpu_threads"], spec["cpu_cores"]) == (2, 5600, 16, 8)
    e = estimate_view(CPU_VIEW)["estimate"]
    assert e["breakdown"]["bandwidth_gbs"] == pytest.approx(2 * 8 * 5600 / 1000)


def test_a_measured_bandwidth_is_the_one_used():
    view = {**CPU_VIEW, "hw_bwm": "measured", "hw_bw": 71.5}
    spec = custom_hardware(view)
    assert spec["bandwidth_gbs"] == 71.5 and spec["bandwidth_measured"] is True
    b = estimate_view(view)["estimate"]["breakdown"]
    assert b["bandwidth_gbs"] == 71.5 and b["bandwidth_measured"] is True


def test_unstated_cpu_fields_are_left_to_the_engine_and_gpus_ignore_them():
    spec = custom_hardware({**CPU_VIEW, "hw_threads": 0, "hw_ch": 0, "hw_mts": 0})
    assert "cpu_threads" not in spec and "memory_channels" not in spec and spec["bandwidth_gbs"] == DEFAULT_VIEW["hw_bw"]
    gpu = custom_hardware({**CPU_VIEW, "hw_kind": "gpu"})
    assert not {"cpu_threads", "memory_channels", "memory_data_rate_mts", "cpu_isa"} & set(gpu)


def test_channels_out_of_range_is_a_clear_error():
    with pytest.raises(EngineInputError) as error:
        custom_hardware({**CPU_VIEW, "hw_ch": 99})
    assert "hw_ch" in str(error.value) or "channels" in str(error.value)


def test_explain_rows_of_a_custom_cpu():
    b = estimate_view({**CPU_VIEW, "threads": 4})["estimate"]["breakdown"]
    assert "AVX-512 VNNI" in b["cpu_kernel"] and b["cpu_threads"] == 4
    assert 0 < b["cpu_bandwidth_gbs"] <= b["bandwidth_gbs"]


@pytest.mark.browser
def test_custom_cpu_on_the_page(app):
    from pagekit import page_view, settle, show

    page, _log, _console = app
    show(page)
    page.select_option('[data-testid="hardware-select"]', "custom")
    page.select_option('[data-testid="custom-hw-backend"]', "cpu")
    fields = page.locator('[data-testid="custom-cpu-fields"]')
    fields.wait_for(state="visible")
    page.fill('[data-testid="custom-hw-cores"]', "8")
    page.fill('[data-testid="custom-hw-threads"]', "16")
    page.fill('[data-testid="custom-hw-channels"]', "2")
    page.fill('[data-testid="custom-hw-mts"]', "5600")
    page.select_option('[data-testid="custom-hw-isa"]', "avx512-vnni")
    page.wait_for_function("() => ['hw_ch=2', 'hw_mts=5600', 'hw_threads=16', 'hw_kind=cpu'].every((k) => location.search.includes(k))")
    settle(page)
    # The bandwidth field is not read: the peak is the channels' at that speed, said on the page.
    assert page.locator('[data-testid="custom-hw-bw"]').is_disabled()
    page.locator('[data-testid="custom-hw-bw-note"]').wait_for(state="visible")
    view = page_view(page)
    assert (view["hw_ch"], view["hw_mts"], view["hw_threads"], view["hw_cores"]) == (2, 5600, 16, 8)
    expected = estimate_view(view)["estimate"]["breakdown"]
    rows = page.inner_text('[data-testid="breakdown-decode"]')
    assert "Kernel" in rows and "AVX-512 VNNI" in rows
    assert "CPU threads" in rows and "can draw" in rows
    assert expected["cpu_bandwidth_gbs"] > 0
    # The link round-trips: reloading it shows the same fields.
    page.reload()
    page.wait_for_selector('[data-testid="engine-status"][data-state="ready"]')
    assert page.input_value('[data-testid="custom-hw-channels"]') == "2" and page.input_value('[data-testid="custom-hw-mts"]') == "5600"
    assert page.input_value('[data-testid="custom-hw-threads"]') == "16"
    show(page)
