"""The page's engine side in CPython: the view -> request mapping (engine/page/view.py, fields.py, lanes.py, query.py, commands.py), the command
lines shown on the page, and the page-level computations (engine/page/explore.py). No numbers are
hard-coded: everything is checked against engine.estimate() itself."""

from __future__ import annotations

import json
import shlex

import pytest

from conftest import run_cli
from engine import EngineInputError, estimate
from engine.page.explore import USE_CASES, advice, agent, marks, reverse, sweep_batch, sweep_context, sweep_hardware, sweep_models, verdicts
from engine.page.commands import check_commands, cli_command
from engine.page.fields import DEFAULT_VIEW, VIEW_FIELDS
from engine.page.lanes import lane_views, parse_lane
from engine.page.query import view_from_query
from engine.page.view import request_for_view

REASONING_MODEL = "qwen3-8b"
MOE_MODEL = "qwen3-30b-a3b"


def view(**changes) -> dict:
    return {**DEFAULT_VIEW, **changes}


def test_every_view_field_has_a_default_that_maps_to_a_valid_request():
    assert set(DEFAULT_VIEW) == set(VIEW_FIELDS)
    request = request_for_view(DEFAULT_VIEW)
    assert request["schedule"] is True
    assert estimate(request)["decode_tps"] > 0


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"depth": 8000}, {"depth": 8000}),
        ({"kv": "q8_0"}, {"kv_quant": "q8_0"}),
        ({"gpus": 2, "split": "row"}, {"gpus": 2, "split": "row"}),
        ({"batch": 8}, {"batch": 8}),
        ({"hw": "amd-ryzen-9-7950x-128gb", "threads": 4}, {"threads": 4}),
        ({"offload": "layers", "gpu_pct": 40}, {"gpu_layers": 0.4}),
        ({"model": MOE_MODEL, "offload": "experts"}, {"expert_offload": True}),
        ({"spec": "draft", "draft": "llama-3.2-1b", "draft_n": 6, "workload": "code"}, {"draft": "llama-3.2-1b", "draft_tokens": 6, "workload": "code"}),
        ({"model": REASONING_MODEL, "think": 900}, {"reasoning_tokens": 900}),
        ({"engine": "llama-cpp"}, {"engine": "llama-cpp"}),
    ],
)
def test_each_setting_reaches_the_request(changes, expected):
    request = request_for_view(view(**changes))
    for key, value in expected.items():
        assert request[key] == value, key


def test_thinking_applies_only_to_reasoning_models():
    assert "reasoning_tokens" not in request_for_view(view(think=900))
    assert request_for_view(view(model=REASONING_MODEL, think=0)).get("reasoning_tokens", 0) == 0


def test_a_draft_defaults_to_the_familys_smallest_model():
    request = request_for_view(view(spec="draft"))
    assert request["draft"] == "llama-3.2-1b"


def test_custom_hardware_and_model_become_dicts_and_bad_json_says_where():
    request = request_for_view(view(hw="custom", hw_bw=500, hw_mem=16, hw_tf=40, hw_kind="gpu", hw_name="Mine"))
    assert request["hardware"] == {"name": "Mine", "kind": "gpu", "memory_gib": 16, "bandwidth_gbs": 500, "fp16_tflops": 40}
    with pytest.raises(EngineInputError, match="line 1, column"):
        request_for_view(view(model="custom", cfg="{nope"))


def test_lanes_override_the_main_view():
    main = view(lane1="rtx-3090**Q8_0", lane2="**Q4_K_M**mtp", lane3="")
    views = lane_views(main)
    assert len(views) == 3
    assert views[1]["hw"] == "rtx-3090" and views[1]["quant"] == "Q8_0" and views[1]["model"] == main["model"]
    assert views[2]["spec"] == "mtp"
    assert parse_lane("****llama-3.2-1b") == {"spec": "draft", "draft": "llama-3.2-1b"}
    with pytest.raises(EngineInputError):
        parse_lane("a*b*c*d*e*f")


def test_view_from_query_types_values():
    parsed = view_from_query("?hw=rtx-3090&prompt=2000&hw_bw=512.5&lane1=rtx-4090****")
    assert parsed["hw"] == "rtx-3090" and parsed["prompt"] == 2000 and parsed["hw_bw"] == 512.5


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"depth": 4000, "kv": "q8_0", "batch": 4},
        {"model": MOE_MODEL, "offload": "experts", "hw": "rtx-4060-ti-16gb"},
        {"spec": "draft", "workload": "code"},
        {"model": REASONING_MODEL, "think": 300},
        {"hw": "amd-ryzen-9-7950x-128gb", "quant": "IQ3_S", "threads": 2},
    ],
)
def test_cli_line_reproduces_the_numbers(changes):
    request = request_for_view(view(**changes))
    line = cli_command(request)
    result = run_cli(*shlex.split(line)[3:])
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    expected = estimate({k: v for k, v in request.items() if k != "schedule"})
    for key in ("decode_tps", "prefill_tps", "ttft_s"):
        assert printed[key] == pytest.approx(expected[key], rel=1e-9), key


def _run_line(line: str) -> dict:
    import subprocess
    import sys

    from conftest import ROOT

    argv = shlex.split(line)
    out = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_custom_hardware_gets_a_cli_line_that_reproduces_it():
    request = request_for_view(view(hw="custom", hw_bw=700, hw_mem=20, hw_tf=60))
    line = cli_command(request)
    assert line.startswith("python -m engine estimate --hardware-json ")
    expected = estimate({k: v for k, v in request.items() if k != "schedule"})
    assert _run_line(line)["decode_tps"] == pytest.approx(expected["decode_tps"])


def test_a_pasted_config_gets_a_python_line_that_reproduces_it():
    from engine.models import load_models

    request = {"hardware": "rtx-4090", "model": {"config": load_models()["qwen3-8b"].config, "name": "mine"}, "quant": "Q4_K_M"}
    line = cli_command(request)
    assert line.startswith("python -c ")
    assert _run_line(line)["decode_tps"] == pytest.approx(estimate(request)["decode_tps"])


def test_check_commands_follow_the_request():
    request = request_for_view(view(depth=4096, kv="q8_0", offload="layers", gpu_pct=50))
    result = estimate(request)
    commands = {c["tool"]: c["command"] for c in check_commands(request, result)}
    bench = shlex.split(commands["llama-bench"])
    assert bench[bench.index("-p") + 1] == str(request["prompt_tokens"])
    assert bench[bench.index("-d") + 1] == "4096"
    assert bench[bench.index("-ctk") + 1] == "q8_0"
    assert bench[bench.index("-ngl") + 1] == str(round(0.5 * result["model"]["layers"]))
    assert "llama-server" in commands
    assert "-t" not in bench  # llama.cpp picks its threads unless the view names them
    cpu = request_for_view(view(hw="amd-ryzen-9-7950x-128gb", threads=6))
    bench = shlex.split({c["tool"]: c["command"] for c in check_commands(cpu, estimate(cpu))}["llama-bench"])
    assert bench[bench.index("-t") + 1] == "6"


def test_context_sweep_slows_with_context_and_matches_estimate():
    data = sweep_context({"view": DEFAULT_VIEW})
    points = [p for p in data["points"] if p["ok"]]
    rates = [p["decode_tps"] for p in points]
    assert rates == sorted(rates, reverse=True)
    first = points[0]
    base = request_for_view(DEFAULT_VIEW)
    expected = estimate({**{k: v for k, v in base.items() if k != "schedule"}, "prompt_tokens": first["context"], "gen_tokens": 32})
    assert first["decode_tps"] == pytest.approx(expected["decode_tps"])


def test_model_and_hardware_sweeps_include_the_current_choice():
    models = sweep_models({"view": view(model="phi-4")})["points"]
    assert [p["id"] for p in models if p["current"]] == ["phi-4"]
    hardware = sweep_hardware({"view": view(hw="rtx-3060-ti")})["points"]
    current = [p for p in hardware if p["current"]]
    assert len(current) == 1
    assert current[0]["decode_tps"] == pytest.approx(estimate({**request_for_view(view(hw="rtx-3060-ti")), "schedule": False})["decode_tps"])


def test_batch_sweep_per_stream_falls_and_aggregate_is_per_stream_times_batch():
    points = [p for p in sweep_batch({"view": DEFAULT_VIEW})["points"] if p["ok"]]
    for p in points:
        assert p["aggregate_tps"] == pytest.approx(p["decode_tps"] * p["batch"])
    per_stream = [p["decode_tps"] for p in points]
    assert per_stream == sorted(per_stream, reverse=True)


def test_marks_are_the_estimates_fit():
    data = marks({"view": DEFAULT_VIEW, "kind": "hardware", "offset": 0, "limit": 20})
    assert data["total"] > 300 and len(data["marks"]) == 20
    for device, fit in list(data["marks"].items())[:5]:
        assert fit == estimate({**request_for_view(view(hw=device)), "schedule": False})["fit"]


def test_reverse_rows_meet_the_target_and_price_per_speed_is_consistent():
    data = reverse({"view": DEFAULT_VIEW, "min_tps": 60, "offset": 0, "limit": 64})
    assert data["rows"]
    for row in data["rows"]:
        assert row["meets"] == (row["decode_tps"] >= 60 and row["fit"] != "no")
        if row["price_usd"]:
            assert row["tps_per_kusd"] == pytest.approx(row["decode_tps"] / row["price_usd"] * 1000)


def test_verdicts_follow_seed_002_thresholds():
    by_case = {c["id"]: c for c in USE_CASES}
    assert (by_case["chat"]["low"], by_case["chat"]["high"]) == (10, 20)
    assert (by_case["coding"]["low"], by_case["coding"]["high"]) == (30, 40)
    assert (by_case["agentic"]["low"], by_case["agentic"]["high"]) == (60, 100)
    levels = {v["id"]: v["level"] for v in verdicts(35)}
    assert levels == {"floor": "good", "reading": "good", "chat": "good", "coding": "ok", "agentic": "slow"}


def test_advice_suggests_a_smaller_quant_that_fits_when_it_does_not():
    tight = view(hw="rtx-3060", model="qwen3-14b", quant="Q8_0")
    base = estimate({**request_for_view(tight), "schedule": False})
    assert base["fit"] != "fits"
    suggestions = advice({"view": tight})["suggestions"]
    quant_steps = [s for s in suggestions if "quant" in s["patch"]]
    assert quant_steps and quant_steps[0]["fit"] == "fits"
    check = estimate({**request_for_view({**tight, **quant_steps[0]["patch"]}), "schedule": False})
    assert check["decode_tps"] == pytest.approx(quant_steps[0]["decode_tps"])


def test_advice_offers_expert_offload_only_where_it_is_faster():
    """"MoE expert offload instead of half the layers": offered exactly when the engine says it
    beats the automatic layer split and still runs."""
    for hw, model, quant in [("rtx-3060", "qwen3-30b-a3b", "Q8_0"), ("rtx-3060", "qwen3-30b-a3b", "Q4_K_M"), ("rtx-4060-ti-16gb", "gpt-oss-120b", "MXFP4")]:
        spill = view(hw=hw, model=model, quant=quant)
        base = estimate({**request_for_view(spill), "schedule": False})
        experts = estimate({**request_for_view({**spill, "offload": "experts"}), "schedule": False})
        worth = base["fit"] == "offload" and experts["fit"] != "no" and experts["decode_tps"] > base["decode_tps"]
        patches = [s["patch"] for s in advice({"view": spill})["suggestions"]]
        assert ({"offload": "experts"} in patches) == worth, (hw, model, quant)


def test_agent_matches_the_seed_example_arithmetic():
    """Article 002 (docs/sources.md): 4 turns x 200 tokens, one 300 ms tool call each: generation + tools + prefill."""
    result = agent({"view": DEFAULT_VIEW})
    assert result["inputs"] == {"turns": 4, "gen_tokens": 200, "tool_calls": 1, "tool_latency_s": 0.3, "tool_result_tokens": 300, "prefix_cache": True}
    assert result["tools_s"] == pytest.approx(1.2)
    for turn in result["turns"]:
        assert turn["generate_s"] == pytest.approx(199 / turn["decode_tps"])
    assert result["total_s"] == pytest.approx(result["ttft_s"] + result["generate_s"] + result["tools_s"])
    # Without a prefix cache every call prefills the whole context again: never faster.
    assert result["other_total_s"] >= result["total_s"]


def test_agent_rejects_nonsense_with_the_field_named():
    with pytest.raises(EngineInputError) as error:
        agent({"view": DEFAULT_VIEW, "turns": 0})
    assert error.value.field == "turns"


def test_chart_library_is_vendored_in_a_versioned_folder(built_site):
    import re

    import build

    version = build.npm_version("chart.js")
    html = (built_site / "index.html").read_text()
    boot = json.loads(re.search(r'<script type="application/json" id="boot-config">(.*?)</script>', html).group(1))
    assert boot["chartURL"] == f"vendor/chart.js-{version}/chart.umd.min.js"
    assert (built_site / boot["chartURL"]).is_file()
    assert "http://" not in boot["chartURL"] and "https://" not in boot["chartURL"]
    # The CSP lets the page reach local servers (Measure your own) and nothing else outside.
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "connect-src 'self' http://localhost:* http://127.0.0.1:*;" in csp
    assert "unsafe-inline" not in csp
