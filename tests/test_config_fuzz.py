"""A pasted config.json can be anything: every reader must answer with EngineInputError (a
message naming the field) or an architecture, never another exception, NaN or a hang."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import EngineInputError, estimate
from engine.arch import READERS, architecture_from_config
from engine.models import load_models

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20)
)
json_values = st.recursive(json_scalars, lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=8)


def catalog_configs() -> list[dict]:
    return [dict(m.config) for m in load_models().values()]


CONFIGS = catalog_configs()


def check(config) -> None:
    try:
        arch = architecture_from_config(config)
    except EngineInputError as exc:
        assert exc.message and exc.field and exc.field.startswith("config")
        return
    assert arch.layers > 0 and arch.params_main > 0
    assert all(t.rows > 0 and t.cols > 0 for t in arch.tensors)


@SETTINGS
@given(config=st.dictionaries(st.text(max_size=30), json_values, max_size=12))
def test_random_objects_are_refused_clearly(config):
    check(config)


@SETTINGS
@given(base=st.sampled_from(CONFIGS), key=st.data(), value=json_values)
def test_one_corrupted_field_of_a_real_config(base, key, value):
    config = dict(base)
    config[key.draw(st.sampled_from(sorted(config)))] = value
    check(config)


@SETTINGS
@given(base=st.sampled_from(CONFIGS), key=st.data())
def test_one_missing_field_of_a_real_config(base, key):
    config = dict(base)
    del config[key.draw(st.sampled_from(sorted(config)))]
    check(config)


@SETTINGS
@given(base=st.sampled_from(CONFIGS), key=st.data(), factor=st.sampled_from([0, 2, 1000, 10**6]))
def test_absurd_sizes_give_finite_estimates_or_a_clear_error(base, key, factor):
    config = dict(base)
    numeric = sorted(k for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0)
    if numeric:
        name = key.draw(st.sampled_from(numeric))
        config[name] = config[name] * factor
    try:
        result = estimate({"hardware": "rtx-4090", "model": {"config": config}, "quant": "Q4_K_M"})
    except EngineInputError as exc:
        assert exc.message
        return
    for value in (result["decode_tps"], result["prefill_tps"], result["ttft_s"], result["memory"]["total_gb"]):
        assert math.isfinite(value) and value > 0


def test_every_model_type_has_a_reader_that_refuses_an_empty_config():
    for model_type in READERS:
        check({"model_type": model_type})
