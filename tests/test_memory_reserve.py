"""The OS reserve scales with the machine: a headless board keeps what Raspberry Pi OS Lite takes on a
Pi Zero 2 W (43% of 512 MiB, docs.printercow.com), a machine of 8 GB or more the fixed 2.5 GB + 10%
(janhq/jan PR #7842), so a 1 GB Raspberry Pi runs a small model instead of fitting nothing."""

import pytest

from engine.catalog import GIB
from engine.memory import OS_RESERVE_FIXED_BYTES, OS_RESERVE_SHARE, os_reserve_bytes, usable_bytes
from engine.system import resolve_device


@pytest.mark.parametrize("gib", [8, 16, 64, 128, 1536])
def test_machines_of_8_gb_and_more_keep_the_fixed_reserve(gib):
    total = gib * GIB
    assert os_reserve_bytes(total) == pytest.approx(OS_RESERVE_FIXED_BYTES + OS_RESERVE_SHARE * total)


def test_a_512_mib_board_keeps_what_pi_os_lite_takes():
    # Pi Zero 2 W on Raspberry Pi OS Lite (Bookworm 64-bit): 291.6 MiB available of 512 MiB after boot.
    assert 512 * 2**20 - os_reserve_bytes(512 * 2**20) == pytest.approx(291.6 * 2**20)


def test_the_reserve_never_exceeds_the_ram_and_grows_with_it():
    sizes = [0.5, 1, 2, 4, 6, 7.5, 8, 16, 64]
    reserves = [os_reserve_bytes(s * GIB) for s in sizes]
    assert all(0 < r < s * GIB for r, s in zip(reserves, sizes))
    assert reserves == sorted(reserves)


def test_a_1_gb_raspberry_pi_has_room_for_a_small_model():
    pi = resolve_device("Raspberry Pi 3 B+")
    assert usable_bytes(pi, "cpu") == pytest.approx(pi.memory_bytes * 291.6 / 512)
    from engine.api import estimate

    result = estimate({"hardware": "Raspberry Pi 3 B+", "model": "SmolLM2-135M", "quant": "Q4_K_M"})
    assert result["memory"]["short_of"] is None and result["memory"]["device_need_gb"] <= result["memory"]["usable_gb"]
