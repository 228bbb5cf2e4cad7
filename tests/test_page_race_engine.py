"""Issue 13's engine side: race lanes as whole set-ups (their own GPU count), set-ups that cannot
load (what they lack, the nearest that run), the system RAM offload assumes as an input, and the
waits people feel (first visible token, whole answer). Numbers come from engine.estimate itself."""

from __future__ import annotations

import json
import shlex

import pytest

from conftest import run_cli
from engine import EngineInputError, estimate
from engine.page import handle
from engine.page.advice import WAIT_CASES, advice, wait_verdicts
from engine.page.commands import cli_command
from engine.page.fields import DEFAULT_VIEW, VIEW_FIELDS
from engine.page.lanes import lane_view, lane_views, parse_lane
from engine.page.query import parse_query
from engine.page.view import request_for_view
from engine.system import DEFAULT_HOST, DEFAULT_SYSTEM_RAM_GIB, resolve_device

REASONING_MODEL = "deepseek-r1-distill-qwen-14b"
MAC = "apple-m3-ultra-80c-512gb"


def view(**changes) -> dict:
    return {**DEFAULT_VIEW, **changes}


# ------------------------------------------------------------------ lanes


def test_a_lane_keeps_its_own_gpu_count_and_a_mac_lane_never_inherits_one():
    main = view(hw="rtx-3090", gpus=2, model="llama-3.3-70b", lane1="rtx-5090*****1", lane2=MAC, lane3="rtx-5090")
    views = lane_views(main)
    assert [v["gpus"] for v in views] == [2, 1, 1, 2]
    assert views[2]["hw"] == MAC
    for v in views:
        assert estimate({**request_for_view(v), "schedule": False})["hardware"]["gpus"] == v["gpus"]


def test_old_five_part_lanes_still_parse_and_gpus_is_the_sixth_part():
    assert parse_lane("rtx-3090****") == {"hw": "rtx-3090"}
    assert parse_lane("rtx-3090*****3") == {"hw": "rtx-3090", "gpus": 3}
    parsed, ignored = parse_query("?hw=rtx-3090&gpus=2&lane1=rtx-5090*****1&lane2=rtx-4090****")
    assert parsed["lane1"] == "rtx-5090*****1" and parsed["lane2"] == "rtx-4090****" and not ignored
    too_many = VIEW_FIELDS["gpus"]["max"] + 1
    for bad in ("rtx-5090*****0", f"rtx-5090*****{too_many}", "rtx-5090*****x", "rtx-5090*****1.5", "a*b*c*d*e*f*g"):
        with pytest.raises(EngineInputError):
            parse_lane(bad)
        assert parse_query(f"?lane1={bad}")[1], bad


def test_a_lane_drops_main_settings_that_cannot_apply_to_it():
    main = view(hw="rtx-4090", model="qwen3-30b-a3b", offload="experts", gpus=2)
    mac = lane_view(main, MAC)
    assert mac["gpus"] == 1 and mac["offload"] == "auto"
    dense = lane_view(main, "*llama-3.1-8b****")
    assert dense["offload"] == "auto" and dense["gpus"] == 2
    assert lane_view(view(spec="draft", draft="llama-3.2-1b"), "*qwen3-14b****")["draft"] == ""


def test_the_worker_computes_a_lane_with_its_whole_view():
    main = view(hw="rtx-3090", gpus=2, model="llama-3.3-70b")
    reply = json.loads(handle(json.dumps({"fn": "lane", "args": {"view": main, "lane": MAC}})))
    assert reply["ok"], reply
    result = reply["result"]
    assert result["view"]["hw"] == MAC and result["view"]["gpus"] == 1
    assert result["estimate"]["hardware"]["gpus"] == 1 and result["estimate"]["schedule"]["arrival_s"]
    bad = json.loads(handle(json.dumps({"fn": "lane", "args": {"view": main}})))
    assert not bad["ok"]


# ------------------------------------------------------------------ system RAM


def test_system_ram_defaults_to_the_default_hosts_memory():
    assert resolve_device(DEFAULT_HOST).memory_gib == DEFAULT_SYSTEM_RAM_GIB == DEFAULT_VIEW["ram"]
    base = {"hardware": "rtx-5090", "model": "llama-3.3-70b", "quant": "Q4_K_M"}
    assert estimate(base)["memory"] == estimate({**base, "system_ram_gib": DEFAULT_SYSTEM_RAM_GIB})["memory"]


def test_system_ram_decides_whether_an_offload_loads():
    base = {"hardware": "rtx-5090", "model": "llama-3.3-70b", "quant": "Q4_K_M"}
    roomy = estimate({**base, "system_ram_gib": 128})
    tight = estimate({**base, "system_ram_gib": 8})
    assert roomy["fit"] == "offload" and roomy["memory"]["system_ram_gib"] == 128
    assert roomy["memory"]["host_need_gb"] <= roomy["memory"]["host_usable_gb"]
    assert tight["fit"] == "no" and tight["memory"]["short_of"] == "system_ram"
    assert tight["memory"]["host_need_gb"] > tight["memory"]["host_usable_gb"]
    with pytest.raises(EngineInputError, match="system_ram_gib"):
        estimate({**base, "hardware": MAC, "system_ram_gib": 64})


def test_the_view_passes_system_ram_for_discrete_gpus_only_and_the_cli_line_reproduces_it():
    request = request_for_view(view(hw="rtx-5090", model="llama-3.3-70b", ram=96))
    assert request["system_ram_gib"] == 96
    assert "system_ram_gib" not in request_for_view(view(hw=MAC, ram=96))
    assert "system_ram_gib" not in request_for_view(view(hw="rtx-5090"))
    line = cli_command(request)
    assert "--system-ram 96" in line
    printed = json.loads(run_cli(*shlex.split(line)[3:]).stdout)
    assert printed["memory"]["host_usable_gb"] == pytest.approx(estimate({**request, "schedule": False})["memory"]["host_usable_gb"])


def test_cli_help_and_text_name_the_system_ram():
    assert "--system-ram" in run_cli("estimate", "--help").stdout
    offload = run_cli("estimate", "--hardware", "RTX 5090", "--model", "llama-3.3-70b", "--quant", "Q4_K_M")
    assert "64 GiB assumed" in offload.stdout and "offload" in offload.stdout
    no = run_cli("estimate", "--hardware", "RTX 5090", "--model", "llama-3.3-70b", "--quant", "Q4_K_M", "--system-ram", "8")
    assert no.returncode == 0 and "won't run" in no.stdout and "tok/s" not in no.stdout and "8 GiB assumed" in no.stdout


# ------------------------------------------------------------------ won't run


@pytest.mark.parametrize(
    "changes",
    [
        {"hw": "apple-m4-max-40c-48gb", "model": "llama-3.3-70b"},
        {"hw": "rtx-3060", "model": "llama-3.3-70b", "ram": 32},
        {"hw": "rtx-4090", "model": "llama-3.3-70b", "offload": "layers", "gpu_pct": 90},
    ],
)
def test_a_setup_that_cannot_load_gets_no_verdicts_what_it_lacks_and_set_ups_that_run(changes):
    v = view(**changes)
    result = estimate({**request_for_view(v), "schedule": False})
    assert result["fit"] == "no"
    got = advice({"view": v})
    assert got["verdicts"] == [] and got["waits"] == []
    assert got["needs"]["short_of"] == result["memory"]["short_of"]
    assert got["needs"]["need_gb"] > got["needs"]["usable_gb"]
    assert got["suggestions"], "a nearest set-up that runs"
    for suggestion in got["suggestions"]:
        applied = estimate({**request_for_view({**v, **suggestion["patch"]}), "schedule": False})
        assert applied["fit"] in ("fits", "offload") and applied["fit"] == suggestion["fit"]


def test_a_mac_too_small_is_offered_the_same_chip_with_more_memory():
    got = advice({"view": view(hw="apple-m4-max-40c-48gb", model="llama-3.3-70b")})
    assert any(s["patch"].get("hw", "").startswith("apple-m4-max-40c-") for s in got["suggestions"])


def test_short_of_system_ram_offers_more_ram_and_more_cards():
    got = advice({"view": view(hw="rtx-3060", model="llama-3.3-70b", ram=32)})
    assert got["needs"]["short_of"] == "system_ram" and got["needs"]["system_ram_gib"] == 32
    patches = [s["patch"] for s in got["suggestions"]]
    assert any("ram" in p and p["ram"] > 32 for p in patches)
    assert any(p.get("gpus", 1) > 1 for p in patches)


# ------------------------------------------------------------------ waits


def test_visible_ttft_is_the_ttft_without_thinking_and_the_schedules_first_visible_token_with_it():
    plain = estimate({"hardware": "rtx-4090", "model": "llama-3.1-8b", "quant": "Q4_K_M", "gen_tokens": 300, "schedule": True})
    assert plain["visible_ttft_s"] == plain["ttft_s"]
    assert plain["total_s"] == pytest.approx(plain["schedule"]["arrival_s"][-1], rel=1e-3)
    for hardware in ("rtx-3090", MAC):
        thinking = estimate({"hardware": hardware, "model": REASONING_MODEL, "quant": "Q4_K_M", "reasoning_tokens": 600, "gen_tokens": 400, "schedule": True})
        arrivals = thinking["schedule"]["arrival_s"]
        assert thinking["visible_ttft_s"] == pytest.approx(arrivals[600], rel=1e-3)
        assert thinking["visible_ttft_s"] - thinking["ttft_s"] > 599 / thinking["decode_tps_high"] / 1.5
        assert thinking["total_s"] == pytest.approx(arrivals[-1], rel=1e-3)


def test_wait_verdicts_judge_the_waits():
    by_id = {c["id"]: c for c in WAIT_CASES}
    chat, agent = by_id["chat_wait"], by_id["agent_wait"]
    levels = {v["id"]: v["level"] for v in wait_verdicts(chat["good_s"], agent["ok_s"] + 1)}
    assert levels == {"chat_wait": "good", "agent_wait": "slow"}
    levels = {v["id"]: v["level"] for v in wait_verdicts(chat["ok_s"], agent["good_s"] / 2)}
    assert levels == {"chat_wait": "ok", "agent_wait": "good"}
    with pytest.raises(EngineInputError):
        wait_verdicts(float("nan"), 1.0)


def test_a_reasoning_models_chat_verdict_counts_its_thinking():
    v = view(hw="rtx-3090", model=REASONING_MODEL, think=2000)
    result = estimate({**request_for_view(v), "schedule": False})
    waits = {w["id"]: w for w in advice({"view": v})["waits"]}
    assert waits["chat_wait"]["value_s"] == pytest.approx(result["visible_ttft_s"])
    assert waits["chat_wait"]["value_s"] > result["ttft_s"] + 10
    assert waits["agent_wait"]["value_s"] == pytest.approx(result["total_s"])
