"""Workload shapes: closed loop, Poisson rate, burst; length spread; shared-prefix share."""

import pytest

from planner.engine import plan, spec_from_dict
from planner.engine.spec import SpecError


def _spec(**workload):
    return {
        "model": "llama-3.1-8b",
        "workload": {
            "concurrency": 8,
            "avg_input_tokens": 512,
            "avg_output_tokens": 128,
            **workload,
        },
        "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
    }


@pytest.mark.parametrize(
    ("workload", "field"),
    [
        ({"arrival": "poisson"}, "workload.request_rate_per_s"),
        ({"arrival": "burst"}, "workload.burst_size"),
        ({"arrival": "sometimes"}, "workload.arrival"),
        ({"shared_prefix_fraction": 1.5}, "workload.shared_prefix_fraction"),
        ({"input_tokens_sd": -1}, "workload.input_tokens_sd"),
        ({"burst_size": 0, "arrival": "burst"}, "workload.burst_size"),
    ],
)
def test_bad_shape_names_the_field(workload, field):
    with pytest.raises(SpecError) as err:
        spec_from_dict(_spec(**workload))
    assert field in err.value.errors


def test_each_shape_reaches_the_prediction():
    closed = plan(spec_from_dict(_spec())).best.serving
    rate = plan(spec_from_dict(_spec(arrival="poisson", request_rate_per_s=2.0))).best.serving
    burst = plan(spec_from_dict(_spec(arrival="burst", burst_size=200))).best.serving
    assert (closed.arrival, rate.arrival, burst.arrival) == ("closed", "poisson", "burst")
    # A light Poisson load waits less for its first token than a burst of 200 prompts.
    assert rate.ttft_p95_ms < burst.ttft_p95_ms
    assert burst.requests_simulated == 200
    for p in (closed, rate, burst):
        assert p.ttft_p50_ms <= p.ttft_p95_ms
        assert p.tpot_p50_ms <= p.tpot_p95_ms
        assert p.e2e_p50_ms <= p.e2e_p95_ms
        assert p.output_low_tok_s <= p.output_tok_s <= p.output_high_tok_s
        assert p.total_tok_s > p.output_tok_s > 0


def test_a_shared_prefix_shortens_time_to_first_token():
    long_prompts = {"avg_input_tokens": 8000, "concurrency": 32}
    cold = plan(spec_from_dict(_spec(**long_prompts))).best.serving
    warm = plan(spec_from_dict(_spec(**long_prompts, shared_prefix_fraction=0.9))).best.serving
    assert warm.ttft_mean_ms < cold.ttft_mean_ms


def test_slo_verdict_and_highest_concurrency_meeting_it():
    loose = plan(spec_from_dict(_spec(ttft_slo_ms=60000, itl_slo_ms=1000))).best.serving
    tight = plan(spec_from_dict(_spec(ttft_slo_ms=1, itl_slo_ms=1))).best.serving
    assert loose.slo_met is True
    # The scan agrees with the verdict: a met SLO holds at least up to the workload's concurrency.
    assert loose.max_concurrency_meeting_slo >= 8
    assert tight.slo_met is False
    assert tight.max_concurrency_meeting_slo is None
    assert loose.saturation_concurrency is not None
    # A TTFT target met at 8 in flight but not at 256: the highest concurrency lies below 256.
    busy = plan(spec_from_dict(_spec(concurrency=256, ttft_slo_ms=400))).best.serving
    assert busy.slo_met is False
    assert (busy.max_concurrency_meeting_slo or 0) < 256
