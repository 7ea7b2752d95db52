"""Issue 33 item 2: the serving simulation's work is bounded, and a capped load says so.

The cost itself is measured by bench/bench_plan_cost.py (no timed assertion here): these tests
hold the bound's arithmetic and the warning in the result.
"""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine import plan, spec_from_dict
from planner.engine.messages import Code
from planner.engine.serving.predict import requests_in_load
from planner.engine.serving.sim_bound import MAX_REQUEST_STEPS, MAX_STEPS, simulation_bound
from planner.engine.serving.simulate import simulate
from tests.planner.engine.test_serving_properties import _ctx

# The preview issue 33 timed at 11 s of CPU: 4,096 concurrent requests of 32k tokens in and out.
HEAVY = {
    "model": "llama-3.1-70b",
    "max_model_len": 65536,
    "workload": {"concurrency": 4096, "avg_input_tokens": 32000, "avg_output_tokens": 32000},
    "hardware": {"node_count": 2, "gpus_per_node": 8, "gpu": "a800-80g-sxm"},
}


def _capped(result):
    return [p for p in result.pitfalls if p.code is Code.PIT_SIMULATION_CAPPED]


def test_a_heavy_load_is_simulated_in_part_and_the_result_says_so():
    spec = spec_from_dict(HEAVY)

    result = plan(spec)

    best = result.best
    requested = requests_in_load(spec.workload, best.replicas)
    (warning,) = _capped(result)
    assert warning.severity == "medium"
    assert warning.message.params == {
        "simulated": best.serving.requests_simulated,
        "requested": requested,
    }
    assert 0 < best.serving.requests_simulated < requested


def test_an_ordinary_load_is_simulated_whole_without_a_warning(s1_spec):
    spec = spec_from_dict(s1_spec)

    result = plan(spec)

    assert not _capped(result)
    best = result.best
    assert best.serving.requests_simulated == requests_in_load(spec.workload, best.replicas)


@settings(max_examples=60, deadline=None)
@given(
    requests=st.integers(1, 100_000),
    input_tokens=st.integers(1, 10_000_000),
    output_tokens=st.integers(1, 10_000_000),
    closed=st.one_of(st.none(), st.integers(1, 1_000_000)),
)
def test_the_bound_keeps_every_load_within_the_budget(
    requests, input_tokens, output_tokens, closed
):
    ctx = _ctx()
    bound = simulation_bound(
        ctx,
        requests=requests,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        closed_concurrency=closed,
    )

    per_request = output_tokens + math.ceil(input_tokens / ctx.max_num_batched_tokens)
    assert 1 <= bound.requests <= requests
    assert bound.requests == 1 or bound.requests * per_request <= MAX_REQUEST_STEPS
    assert bound.max_steps <= MAX_STEPS
    if requests * per_request <= MAX_REQUEST_STEPS:
        assert bound.requests == requests  # nothing is cut from a load within the budget


def test_the_simulation_stops_at_its_step_bound():
    ctx = _ctx()
    arrivals = [(0.0, 512, 1, 0)] * 1000  # one step each, one after the other

    whole = simulate(ctx, arrivals, closed_concurrency=1)
    cut = simulate(ctx, arrivals, closed_concurrency=1, max_steps=100)

    assert len(whole.finished) == 1000
    assert cut.steps == 100
    assert len(cut.finished) == 100
