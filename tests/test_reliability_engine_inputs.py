"""Hostile input to the engine's page-facing functions (engine/page/: fields, view, lanes, query, commands, explore) and to
engine.page.handle, the worker's JSON boundary: every call either answers with finite, non-negative
numbers or raises EngineInputError with a message (through handle: {"ok": false, "error"} that
is never an "internal error"). Hypothesis generates the inputs; the example counts are in the
README's "Reliability and security" section (EXAMPLES below)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import EngineInputError
from engine.page import handle
from engine.page.explore import AGENT_INPUTS, functions, quant_for, verdicts
from engine.page.commands import check_commands, cli_command
from engine.page.fields import DEFAULT_VIEW, VIEW_FIELDS, check_view, json_depth
from engine.page.lanes import lane_views, parse_lane
from engine.page.query import parse_query
from engine.page.view import custom_hardware, custom_model, default_draft, estimate_view, is_reasoning, request_for_view

#: Examples per property (the README quotes their sum).
EXAMPLES = {"views": 1500, "estimates": 400, "explore": 600, "handle": 1500, "queries": 1500, "helpers": 400}


def examples(kind: str) -> settings:
    return settings(max_examples=EXAMPLES[kind], deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


#: Strings an attacker or a careless paste puts anywhere.
HOSTILE_TEXT = [
    "", " ", "<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "javascript:alert(1)", "__proto__",
    "constructor", "prototype", "toString", "NaN", "Infinity", "-Infinity", "-1", "1e308", "1e-308", "0x10", "١٢٣",
    "\u0000", "\ufeff", "\ud800", "😀" * 5, "a" * 10_000, "rtx-4090\n", "../../etc/passwd", "%00", "null", "[]", "{}",
]
hostile_text = st.sampled_from(HOSTILE_TEXT) | st.text(max_size=40)
hostile_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.sampled_from([0, -1, 1, 2**31, 2**63, 10**400 // 10**390]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324]), hostile_text,
)
hostile_json = st.recursive(hostile_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3), max_leaves=6)


def valid_value(key: str):
    """A value the page itself could send for one view setting."""
    spec = VIEW_FIELDS[key]
    kind = spec["kind"]
    if kind == "int":
        return st.integers(spec["min"], spec["max"])
    if kind == "number":
        return st.floats(spec["min"], spec["max"], allow_nan=False)
    if kind == "choice":
        return st.sampled_from(spec["choices"])
    if kind == "text":
        return st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF, exclude_characters="\x7f"), max_size=spec["max_length"])
    if kind == "json":
        return st.sampled_from(["", "{}", '{"model_type": "llama"}', "{nope", "[1]"])
    if kind == "lane":
        return st.sampled_from(["", "rtx-3090****", "**Q8_0", "apple-m4-max-40c-128gb*qwen3-8b***mtp", "a*b*c*d*e*f", "nope*nope"])
    ids = {"hardware": ["rtx-4090", "rtx-3090", "custom", "apple-m4-max-40c-128gb", "nope"], "model": ["llama-3.1-8b", "qwen3-8b", "qwen3-30b-a3b", "custom", "nope"],
           "quant": ["Q4_K_M", "Q8_0", "F16", "MXFP4", "nope"], "engine": ["", "llama-cpp", "vllm", "nope"], "answer": ["chat", "code", "document", "nope"],
           "draft": ["", "llama-3.2-1b", "nope"], "device": ["", "rtx-3060", "apple-m2-pro-19c-32gb", "nope"]}
    return st.sampled_from(ids[kind])


@st.composite
def views(draw, hostile_share: float = 0.3) -> dict:
    """A view with some settings as the page sends them and some hostile (wrong type, NaN,
    out of range, markup), sometimes with keys that are no setting at all."""
    view = {}
    for key in draw(st.lists(st.sampled_from(sorted(VIEW_FIELDS)), max_size=8, unique=True)):
        view[key] = draw(hostile_json) if draw(st.floats(0, 1)) < hostile_share else draw(valid_value(key))
    if draw(st.integers(0, 9)) == 0:
        view[draw(hostile_text)] = draw(hostile_json)
    return view


def assert_clear(error: EngineInputError) -> None:
    assert isinstance(error, EngineInputError)
    assert error.message and "\n" not in error.message and len(error.message) < 400


def assert_sound_numbers(value, path: str = "result") -> None:
    """Every number in a result is finite, and none that is a speed, time or size is negative."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        assert math.isfinite(value), path
        if path.rsplit(".", 1)[-1].endswith(("_tps", "_s", "_gb", "_gbs", "tokens")):
            assert value >= 0, path
        return
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        assert_sound_numbers(item, f"{path}.{key}")


@examples("views")
@given(view=views(hostile_share=0.5))
def test_check_view_accepts_a_complete_view_or_names_the_bad_setting(view):
    try:
        full = check_view(view)
    except EngineInputError as error:
        assert_clear(error)
        return
    assert set(full) == set(VIEW_FIELDS)
    for key, spec in VIEW_FIELDS.items():
        if spec["kind"] in ("int", "number"):
            assert spec["min"] <= full[key] <= spec["max"] and not isinstance(full[key], bool), key
        else:
            assert isinstance(full[key], str), key


@examples("estimates")
@given(view=views())
def test_estimate_view_answers_with_sound_numbers_or_a_clear_error(view):
    try:
        result = estimate_view(view)
    except EngineInputError as error:
        assert_clear(error)
        return
    assert_sound_numbers(result)
    estimate = result["estimate"]
    assert estimate["decode_tps"] > 0 and estimate["ttft_s"] > 0 and estimate["fit"] in ("fits", "offload", "no")
    assert isinstance(result["cli"], str) and result["commands"]


def explore_args(draw, name: str) -> dict:
    """Arguments for one explore function: its own options, valid or hostile, and a view."""
    args = {"view": draw(views(hostile_share=0.15)) if draw(st.integers(0, 5)) else draw(hostile_json)}
    options = {
        "marks": {"kind": st.sampled_from(["hardware", "models", "quants", "nope"]), "offset": st.integers(-2, 400), "limit": st.integers(0, 6)},
        "reverse": {"min_tps": st.floats(-1, 200) | st.integers(0, 10**6), "budget_usd": st.none() | st.floats(-1, 1e8) | st.integers(0, 10**8), "offset": st.integers(0, 400), "limit": st.integers(1, 6)},
        "agent": {key: st.integers(lo - 1, hi + 1) if isinstance(default, int) else st.floats(lo - 1, hi + 1) for key, (default, lo, hi) in AGENT_INPUTS.items()}
        | {"prefix_cache": st.booleans()},
    }.get(name, {})
    for key, strategy in options.items():
        roll = draw(st.integers(0, 9))
        if roll < 6:
            args[key] = draw(strategy)
        elif roll < 8:
            args[key] = draw(hostile_json)
    if draw(st.integers(0, 19)) == 0:
        args[draw(hostile_text)] = 1
    if name == "agent" and isinstance(args.get("turns"), int) and not isinstance(args.get("turns"), bool):
        args["turns"] = min(args["turns"], 6)  # keep each example short; the range check still sees 0 and 101
    return args


@examples("explore")
@given(data=st.data(), name=st.sampled_from(sorted(functions())))
def test_explore_functions_answer_or_refuse_clearly(data, name):
    args = explore_args(data.draw, name)
    try:
        result = functions()[name](args)
    except EngineInputError as error:
        assert_clear(error)
        return
    assert_sound_numbers(result)
    json.dumps(result, allow_nan=False)


@st.composite
def messages(draw) -> str:
    """What could reach engine.page.handle: a proper call with hostile arguments, a call of an
    unknown function, any JSON at all, or text that is not JSON."""
    names = ["estimate", "list", "view", *sorted(functions()), "nope", "__class__", "eval"]
    roll = draw(st.integers(0, 9))
    if roll < 5:
        name = draw(st.sampled_from(names))
        if name in functions():
            args = explore_args(draw, name)
        elif name == "view":
            args = draw(views(hostile_share=0.5))
        elif name == "list":
            args = draw(st.sampled_from([{"kind": "engines"}, {"kind": "quants"}, "hardware", {"kind": "nope"}, {}, None, []])) if draw(st.booleans()) else draw(hostile_json)
        else:
            args = draw(hostile_json)
        return json.dumps({"fn": name, "args": args})
    if roll < 8:
        return json.dumps(draw(hostile_json))
    return draw(st.sampled_from(["", "{", "[1,", "NaN", '{"fn": "view", "args": NaN}', "\x00", "{" * 50 + "}" * 50, "a" * 5000]) | st.text(max_size=50))


@examples("handle")
@given(message=messages())
def test_handle_always_answers_json_and_never_an_internal_error(message):
    answer = json.loads(handle(message), parse_constant=lambda name: pytest.fail(f"{name} in an answer"))
    assert answer["ok"] in (True, False)
    if answer["ok"]:
        assert_sound_numbers(answer["result"])
        return
    assert answer["error"]["message"]
    assert not answer["error"]["message"].startswith("internal error"), answer


#: Messages none of which the page can send (its worker sends JSON.stringify({fn, args})), but
#: the boundary must still answer with an input error, never an "internal error".
HOSTILE_MESSAGES = [
    "",  # not JSON at all
    '{"fn": [], "args": {}}',  # a function name that is not text
    '{"fn": "list", "args": []}',  # a catalog kind that is not text
    '{"fn": "list", "args": {"kind": {}}}',
    "[" * 3000 + "]" * 3000,  # nesting deeper than Python's recursion limit
]


@pytest.mark.parametrize("message", HOSTILE_MESSAGES, ids=["not-json", "fn-not-text", "kind-list", "kind-object", "deep-nesting"])
def test_hostile_messages_get_an_input_error_not_an_internal_one(message):
    error = json.loads(handle(message))["error"]
    assert error["message"] and not error["message"].startswith("internal error")


QUERY_PIECES = [
    "hw=rtx-3090", "hw=custom", "hw=<script>", "model=qwen3-8b", "model=custom", "cfg=%7B%7D", "cfg=%7Bnope", "cfg=" + "%5B" * 20,
    "prompt=2000", "prompt=-5", "prompt=NaN", "prompt=1e3", "prompt=99999999999", "prompt=", "hw_bw=512.5", "hw_bw=Infinity",
    "hw_name=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E", "hw_name=%00", "__proto__=1", "constructor=x", "lane1=rtx-4090****",
    "lane1=a*b*c*d*e*f", "kv=q8_0", "kv=zz", "%ZZ=1", "%F0%9F=1", "&&", "=", "a", "+", "spec=mtp", "batch=0", "gpus=17",
]


@examples("queries")
@given(pieces=st.lists(st.sampled_from(QUERY_PIECES) | st.text(max_size=30), max_size=12), prefix=st.sampled_from(["", "?", "??"]))
def test_any_query_string_gives_a_valid_view_and_a_list_of_what_was_ignored(pieces, prefix):
    query = prefix + "&".join(pieces)
    view, ignored = parse_query(query)
    assert check_view(view) == view
    assert all(set(item) == {"key", "reason"} and item["reason"] for item in ignored)
    try:
        request_for_view(view)
    except EngineInputError as error:
        assert_clear(error)


def test_a_link_too_long_is_refused_whole():
    view, ignored = parse_query("prompt=2000&" + "x" * 200_000)
    assert view == DEFAULT_VIEW and ignored == [{"key": "(link)", "reason": "too long"}]


@examples("helpers")
@given(value=hostile_json)
def test_small_public_helpers_refuse_what_they_cannot_use(value):
    calls = [
        lambda: is_reasoning(value),
        lambda: default_draft(value),
        lambda: parse_lane(value),
        lambda: lane_views(value),
        lambda: custom_hardware(value),
        lambda: custom_model(value),
        lambda: cli_command(value),
        lambda: check_commands(value, value),
        lambda: verdicts(value),
        lambda: quant_for(value, value),
        lambda: json_depth(value),
        lambda: parse_query(value),
    ]
    for call in calls:
        try:
            call()
        except EngineInputError as error:
            assert_clear(error)


def test_deeply_nested_config_is_refused_before_it_is_parsed():
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    with pytest.raises(EngineInputError, match="nests deeper"):
        request_for_view({**DEFAULT_VIEW, "model": "custom", "cfg": deep[:20_000]})
    assert parse_query("cfg=" + "%7B%22a%22%3A" * 20 + "1" + "%7D" * 20)[1] == [{"key": "cfg", "reason": "nested too deeply"}]


def test_json_without_nan_or_infinity():
    with pytest.raises(EngineInputError, match="not valid JSON"):
        request_for_view({**DEFAULT_VIEW, "model": "custom", "cfg": '{"hidden_size": NaN}'})


def test_agent_counts_must_be_whole_numbers():
    with pytest.raises(EngineInputError, match="whole number") as error:
        functions()["agent"]({"view": DEFAULT_VIEW, "turns": 2.5})
    assert error.value.field == "turns"
    with pytest.raises(EngineInputError, match="true or false"):
        functions()["agent"]({"view": DEFAULT_VIEW, "prefix_cache": "yes"})


def test_explore_options_are_checked_not_ignored():
    with pytest.raises(EngineInputError, match="unknown option"):
        functions()["advice"]({"view": DEFAULT_VIEW, "min_tps": 3})
    with pytest.raises(EngineInputError):
        functions()["marks"]({"view": DEFAULT_VIEW, "kind": "hardware", "offset": True})
