"""This computer: real WebGL renderer strings (Chrome/Edge on Windows, macOS and Linux, Firefox's
buckets, Safari, Brave, software renderers) mapped to a catalog device and a confidence by
engine.page.detect, the one place the rule lives (the page calls it through the worker).

Sources of the strings: Chrome's ANGLE formats as printed by browsers (Windows D3D11 with the PCI
device id, macOS Metal and OpenGL, Linux Vulkan and Mesa OpenGL; public fingerprint tables such as
ixBrowser's WebGL appendix and brave/brave-browser issues 55442/55443); Firefox's sanitised
buckets from mozilla-central dom/canvas/gtest/TestSanitizeRenderer.cpp; Brave's "Brave" and
eight-character random answers from brave/brave-browser issues 10214 and 57944.
"""

from __future__ import annotations

import json

import pytest

from engine.errors import EngineInputError
from engine.hardware import load_hardware
from engine.page import handle
from engine.page.detect import detect_device, parse_renderer

WINDOWS = [
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-3060", "high"),
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 4090 (0x00002684) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-4090", "high"),
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 5090 (0x00002B85) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-5090", "high"),
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 4070 Laptop GPU (0x00002820) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-4070-laptop", "high"),
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Laptop GPU (0x00002520) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-3060-laptop", "high"),
    ("ANGLE (AMD, AMD Radeon RX 7900 XTX (0x0000744C) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rx-7900-xtx", "high"),
    ("ANGLE (AMD, AMD Radeon RX 6800 XT Direct3D11 vs_5_0 ps_5_0, D3D11)", "rx-6800-xt", "high"),
    # Versions of one card that differ in memory only: the catalog's bare-name entry, the others named.
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 4060 Ti (0x00002803) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-4060-ti-16gb", "high"),
    ("ANGLE (Intel, Intel(R) Arc(TM) A770 Graphics (0x000056A0) Direct3D11 vs_5_0 ps_5_0, D3D11)", "arc-a770", "high"),
    # One name for cards with different GPU cores (10 GB and 12 GB RTX 3080): the version is asked.
    ("ANGLE (NVIDIA, NVIDIA GeForce RTX 3080 (0x00002206) Direct3D11 vs_5_0 ps_5_0, D3D11)", "rtx-3080", "partial"),
    ("ANGLE (AMD, AMD Radeon(TM) 8060S Graphics (0x00001586) Direct3D11 vs_5_0 ps_5_0, D3D11)", "ryzen-ai-max-plus-395-128gb", "partial"),
    # Integrated GPUs the catalog does not hold: nothing suggested.
    ("ANGLE (Intel, Intel(R) UHD Graphics 620 (0x00005917) Direct3D11 vs_5_0 ps_5_0, D3D11)", "unknown", "low"),
    ("ANGLE (AMD, AMD Radeon(TM) Graphics (0x00001681) Direct3D11 vs_5_0 ps_5_0, D3D11)", "unknown", "low"),
    ("ANGLE (Unknown, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0, D3D11)", "unknown", "low"),
]
MACOS = [
    ("ANGLE (Apple, ANGLE Metal Renderer: Apple M2 Pro, Unspecified Version)", "apple-m2-pro-19c-32gb", "partial"),
    ("ANGLE (Apple, ANGLE Metal Renderer: Apple M4 Max, Unspecified Version)", "apple-m4-max-40c-128gb", "partial"),
    ("ANGLE (Apple, ANGLE Metal Renderer: Apple M1, Unspecified Version)", "apple-m1-8c-16gb", "partial"),
    ("ANGLE (Apple, Apple M2 Ultra, OpenGL 4.1)", "apple-m2-ultra-76c-192gb", "partial"),
    ("ANGLE (Intel Inc., Intel(R) Iris(TM) Plus Graphics 655, OpenGL 4.1)", "unknown", "low"),
    ("ANGLE (AMD, AMD Radeon Pro 5500M OpenGL Engine, OpenGL 4.1)", "unknown", "low"),
]
LINUX = [
    ("ANGLE (NVIDIA, Vulkan 1.3.242 (NVIDIA GeForce RTX 3090 (0x00002204)), NVIDIA)", "rtx-3090", "high"),
    ("ANGLE (NVIDIA Corporation, NVIDIA GeForce RTX 4090/PCIe/SSE2, OpenGL 4.5.0 NVIDIA 535.113.01)", "rtx-4090", "high"),
    ("ANGLE (AMD, AMD Radeon RX 6800 XT (radeonsi, navi21, LLVM 15.0.7, DRM 3.54, 6.5.0-14-generic), OpenGL 4.6)", "rx-6800-xt", "high"),
    ("NVIDIA A100-SXM4-80GB/PCIe/SSE2", "a100-sxm-80gb", "high"),
    ("ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)", "unknown", "low"),
    ("ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)", "unknown", "low"),
    ("ANGLE (Mesa, llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5)", "unknown", "low"),
    ("llvmpipe (LLVM 11.0.0, 128 bits)", "unknown", "low"),
]
FIREFOX = [
    ("ANGLE (NVIDIA, NVIDIA GeForce GTX 980 Direct3D11 vs_5_0 ps_5_0), or similar", "unknown", "low"),
    ("GeForce GTX 980, or similar", "unknown", "low"),
    ("Radeon R9 200 Series, or similar", "unknown", "low"),
    ("Intel(R) HD Graphics 400, or similar", "unknown", "low"),
    ("Apple M1, or similar", "unknown", "low"),
    ("llvmpipe, or similar", "unknown", "low"),
]
SAFARI_BRAVE_PHONES = [
    ("Apple GPU", "unknown", "low"),
    ("Brave", "unknown", "low"),
    ("aZ3kQ9xP", "unknown", "low"),
    ("Adreno (TM) 740", "unknown", "low"),
    ("Mali-G710 MC10", "unknown", "low"),
]
CASES = WINDOWS + MACOS + LINUX + FIREFOX + SAFARI_BRAVE_PHONES


def test_at_least_25_real_renderer_strings_from_every_browser_family():
    assert len(CASES) >= 25
    assert min(len(WINDOWS), len(MACOS), len(LINUX), len(FIREFOX)) >= 4


@pytest.mark.parametrize(("renderer", "device", "confidence"), CASES, ids=[c[0][:60] for c in CASES])
def test_renderer_maps_to_device_and_confidence(renderer, device, confidence):
    result = detect_device({"renderer": renderer})
    assert (result["id"], result["confidence"]) == (device, confidence), result
    assert renderer in result["reported"]
    assert result["why"]
    if confidence == "partial":
        # The variants are the catalog's versions of the named chip, the offered one first.
        assert len(result["variants"]) > 1 and result["variants"][0] == device
        names = {load_hardware()[v].base_id for v in result["variants"]}
        assert len(names) >= 1 and all(load_hardware()[v].family == load_hardware()[device].family for v in result["variants"])
    elif confidence == "high":
        assert result["variants"][0] == device
        # Several versions only when they differ in memory size: then the others are named.
        assert len(result["variants"]) == 1 or "also sold as" in " ".join(result["notes"])
    else:
        assert result["variants"] == []


def test_a_mac_chip_offers_every_catalogued_variant_of_it_and_no_other_chip():
    result = detect_device({"renderer": "ANGLE (Apple, ANGLE Metal Renderer: Apple M2 Pro, Unspecified Version)", "platform": "macOS", "architecture": "arm"})
    assert sorted(result["variants"]) == sorted(d for d in load_hardware() if d.startswith("apple-m2-pro-"))
    assert "which of its 4" in result["why"]


def test_pci_id_and_device_are_read_out_of_the_angle_string():
    parsed = parse_renderer("ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)")
    assert parsed == {"device": "NVIDIA GeForce RTX 3060", "pci_id": "0x2504", "api": "D3D11"}
    assert parse_renderer("ANGLE (Apple, ANGLE Metal Renderer: Apple M2 Pro, Unspecified Version)")["device"] == "Apple M2 Pro"


def test_integrated_gpu_and_a_second_webgpu_adapter_are_said():
    result = detect_device({"renderer": "ANGLE (Intel, Intel(R) UHD Graphics 620 (0x00005917) Direct3D11 vs_5_0 ps_5_0, D3D11)", "hybrid_vendor": "nvidia"})
    notes = " ".join(result["notes"])
    assert "integrated GPU" in notes and "two GPUs" in notes


def test_webgpu_naming_another_vendor_lowers_a_named_gpu_to_partial():
    base = {"renderer": "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)"}
    assert detect_device({**base, "gpu_vendor": "nvidia", "gpu_architecture": "ampere"})["confidence"] == "high"
    crossed = detect_device({**base, "gpu_vendor": "intel"})
    assert crossed["confidence"] == "partial" and crossed["id"] == "rtx-3060"


def test_buckets_are_reported_as_buckets_and_cores_as_given():
    result = detect_device({"renderer": "Apple GPU", "cores": 8, "memory_gb": 8})
    assert "8 logical cores" in result["reported"] and "bucket" in result["reported"]
    assert "every Mac" in result["why"]


def test_the_worker_boundary_answers_and_refuses_junk():
    answer = json.loads(handle(json.dumps({"fn": "detect_device", "args": {"renderer": "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002504) Direct3D11 vs_5_0 ps_5_0, D3D11)"}})))
    assert answer["ok"] and answer["result"]["id"] == "rtx-3060"
    for junk in ({"renderer": 5}, {"renderer": "x" * 5000}, {"cores": -1}, {"memory_gb": float("inf")}, "renderer"):
        with pytest.raises(EngineInputError):
            detect_device(junk)
    assert detect_device({})["id"] == "unknown"
