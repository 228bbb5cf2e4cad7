"""GPU and SoC entries whose spec pages were read this session (issue 14): each pins the numbers the
page states, so a later edit that drifts from the page read fails here. The URL is the one in the
entry's ``verified_from``; entries whose pages could not be read keep ``unverified`` with the reason."""

import pytest

from engine.devices import resolve_device
from engine.hardware import load_hardware

#: AMD's RDNA/Vega/Polaris specification table as Scan's TekSpek prints it.
SCAN_AMD_TABLE = "https://www.scan.co.uk/tekspek/gpu-graphics/amd-radeon-rx-5600-xt"

#: id -> (URL read, bandwidth GB/s, bus bits, SMs/CUs/cores, boost MHz, TDP W, launch price USD or None)
#: as the page (or its TechPowerUp copy) states them.
GPUS_READ = {
    "rtx-5050": ("https://fpsbench.com/compare/gpu/nvidia-tesla-t4-vs-nvidia-geforce-rtx-5050", 320, 128, 20, 2572, 130, 249),
    "quadro-rtx-6000": ("https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000", 672, 384, 72, 1770, 295, 6299),
    "gtx-1650-super": ("https://hmc-tech.com/gpu/nvidia-geforce-rtx-2060-12gb-vs-nvidia-geforce-gtx-1650-super", 192, 128, 20, 1725, 100, 159),
    "rtx-4050-laptop": ("https://data-check.eu/en/nvidia-geforce-rtx-4050-laptop-gpu/", 192, 96, 20, 2370, 115, None),
    "rtx-5060-laptop": ("https://fpsbench.com/compare/gpu/nvidia-t550-mobile-vs-nvidia-geforce-rtx-5060-mobile", 384, 128, 26, None, None, None),
    "rtx-5050-laptop": ("https://goldmidi.com/community/threads/nvidia-explains-gddr7", 384, 128, 20, None, 100, None),
    "quadro-rtx-4000": ("https://www.techpowerup.com/gpu-specs/quadro-rtx-4000.c3336", 416, 256, 36, 1545, 160, 899),
    "rtx-a5500": ("https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-rtx-a5500", 768, 384, 80, 1665, 230, None),
    "h20": ("https://willitrunai.com/es/gpus/h20-96gb", 4032, 6144, 78, None, 400, None),
    "rx-590": ("https://www.guru3d.com/articles-pages/xfx-radeon-rx-590-fatboy-review,5.html", 256, 256, 36, 1545, None, None),
    "rx-480": ("https://www.guru3d.com/articles-pages/xfx-radeon-rx-590-fatboy-review,5.html", 256, 256, 36, 1266, 150, None),
    "rx-5700": (SCAN_AMD_TABLE, 448, 256, 36, 1725, None, None),
    "rx-5600-xt": (SCAN_AMD_TABLE, 288, 192, 36, 1560, 150, None),
    "rx-5500-xt": (SCAN_AMD_TABLE, 224, 128, 22, 1845, 130, None),
    "rx-vega-64": (SCAN_AMD_TABLE, 483.8, 2048, 64, 1546, None, None),
    "rx-6500-xt": ("https://www.club386.com/amd-launches-199-radeon-rx-6500-xt-graphics-card-cheaper-rdna-2/", 144, 64, 16, 2815, 107, 199),
    "rx-7900m": ("https://fpsbench.com/compare/gpu/amd-radeon-rx-7900m-vs-amd-radeon-r6-m255dx", 576, 256, 72, 2090, 180, None),
    "rx-7600m-xt": ("https://fpsbench.com/compare/gpu/amd-radeon-rx-7600m-xt-vs-amd-radeon-vega-8", 288, 128, 32, 2469, 120, None),
    "ryzen-5-7640u-radeon-760m": ("https://cputronic.com/pt/cpu/amd-ryzen-5-7640u", 120, 128, 8, 2600, 28, None),
    "steam-deck": ("https://vuink.com/post/nefgrpuavpn-d-dpbz/gaming/2021/11/valve-provides", 88, 128, 8, 1600, 15, None),
    "steam-deck-oled": ("https://visualfoodie.com/understanding-steam-deck-hardware-and-specs", 102.4, 128, 8, 1600, 15, None),
    "arc-a770m": ("https://www.topcpu.net/en/gpu-c/arc-a770m-vs-iris-xe-max-graphics", 512, 256, 32, 1650, 120, None),
    "arc-pro-a60": ("https://fpsbench.com/compare/gpu/intel-arc-pro-a60-vs-nvidia-tesla-t4", 384, 192, 16, 2050, 130, None),
    "jetson-orin-nano-4gb": ("https://2.zoppoz.workers.dev:443/https/www.scribd.com/document/673174036/Orin-nano-datasheet", 34.1, 64, 4, 625, None, None),
    "core-ultra-5-226v": ("https://noticiasdehardware.com/?p=214", 136.5, 128, 7, 1850, None, None),
    "core-ultra-9-288v": ("https://noticiasdehardware.com/?p=214", 136.5, 128, 8, 2050, None, None),
    "radeon-pro-w6800": ("https://www.hardwareluxx.de/index.php/news/hardware/grafikkarten/56343-amd-packt-big-navi", 512, 256, 60, None, 250, None),
    "jetson-nano": ("https://cpu-gpu.alldbin.com/graphics-card-comparison/Jetson-TX2-GPU-and-Jetson-Nano-comparison.html", 25.6, 64, 1, 921, 10, None),
    "rtx-3050-6gb": ("https://hmc-tech.com/gpu/nvidia-geforce-rtx-3050-6gb-vs-nvidia-geforce-rtx-2060-tu104", 168, 96, 18, 1470, 70, 179),
    "rtx-2050-laptop": ("https://sodienbien.edu.vn/?p=158306", 112, 64, 16, 1477, 45, None),
    "v100s-pcie": ("https://dobreprogramy.pl/nvidia-tesla-v100s-oficjalnie", 1133.6, 4096, 80, 1601, 250, None),
    "rx-6400": ("https://www.club386.com/amd-launches-199-radeon-rx-6500-xt-graphics-card-cheaper-rdna-2/", 128, 64, 12, 2321, 53, None),
}


@pytest.mark.parametrize("base_id", sorted(GPUS_READ))
def test_read_gpus_match_the_page_read(base_id):
    url, bandwidth, bus, cores, boost, tdp, price = GPUS_READ[base_id]
    device = next(d for d in load_hardware().values() if d.base_id == base_id)
    assert device.verified_from.startswith(url) and not device.unverified
    assert (device.bandwidth_gbs, device.memory_bus_bits, device.gpu_cores) == (bandwidth, bus, cores)
    for field, pinned in (("gpu_clock_mhz", boost), ("tdp_w", tdp), ("launch_price_usd", price)):
        if pinned is not None:
            assert getattr(device, field) == pinned, (base_id, field)


def test_h20_bandwidth_is_within_nvidias_rounded_figure():
    """NVIDIA states 4.0 TB/s; the entry's 4032 GB/s is bus x data rate, within 1% of it."""
    assert load_hardware()["h20"].bandwidth_gbs == pytest.approx(4000, rel=0.01)


def test_partly_read_entries_say_what_was_not_read():
    """Entries whose decode-setting bandwidth was not on a page read stay unverified, naming the page
    that was read and the figure that was not."""
    hw = {d.base_id: d for d in load_hardware().values()}
    for base_id in ("rtx-5070-laptop", "a2", "rtx-2060-12gb", "v100-sxm2", "ryzen-ai-7-350-radeon-860m", "ryzen-ai-5-340-radeon-840m", "arc-pro-a40",
                    "core-ultra-7-155h", "core-ultra-5-125h", "core-ultra-9-185h", "ryzen-z1-extreme",
                    "ryzen-7-6800u-radeon-680m", "ryzen-ai-9-365-radeon-880m", "gh200", "a30"):
        device = hw[base_id]
        assert device.unverified and not device.verified_from and "https://" in device.unverified, base_id
    assert hw["rtx-2060-12gb"].tdp_w == 185


def test_rx_7600m_xt_rates_are_the_pages():
    """The entry had a 2300 MHz clock typed; the page's 2469 MHz boost gives FP32 20.23 / FP16 40.45."""
    d = load_hardware()["rx-7600m-xt"]
    assert (d.fp32_tflops, d.fp16_tflops) == (20.23, 40.45)
    assert d.fp16_tflops == pytest.approx(d.gpu_cores * 512 * d.gpu_clock_mhz * 1e6 / 1e12, rel=0.001)


def test_lunar_lake_core_ultra_5_runs_its_gpu_at_1_85_ghz():
    """Intel gives the Arc 130V 1.85 GHz on every Core Ultra 5 200V (the entry had 1.95 typed); the
    XMX FP16 rate is 7 Xe2 cores x 2048 FLOP/clk at that clock and INT8 twice it."""
    d = next(d for d in load_hardware().values() if d.base_id == "core-ultra-5-226v")
    assert d.fp16_tflops == pytest.approx(7 * 2048 * 1.85e9 / 1e12, abs=0.01) and d.int8_tops == 2 * d.fp16_tflops


def test_p40_street_price_is_the_dated_figure_read():
    """Issue 14: the P40 is bought used; gpudojo's December 2025 guide prices it at around $170."""
    price = load_hardware()["tesla-p40"].street_price
    assert (price["usd"], price["condition"], price["date"]) == (170, "used", "2025-12")
    assert price["source"].startswith("https://gpudojo.pages.dev/articles/tesla-p40-best-budget-gpu.html")


def test_rtx_4060_ti_prices_each_memory_size():
    """Issue 14: a memory variant does not inherit the base price. NVIDIA announced the RTX 4060 Ti
    at $399 (8 GB) and $499 (16 GB); the bare name is the 16 GB card and shows its own price."""
    hw = load_hardware()
    assert (hw["rtx-4060-ti-8gb"].launch_price_usd, hw["rtx-4060-ti-16gb"].launch_price_usd) == (399, 499)
    assert resolve_device("RTX 4060 Ti").launch_price_usd == 499
