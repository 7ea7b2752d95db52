"""The wizard's load step: arrival shapes reach the spec, a missing rate or burst size is named."""

from planner.forms.wizard import LoadStepForm

BASE = {
    "concurrency": "16",
    "avg_input_tokens": "1024",
    "avg_output_tokens": "256",
    "traffic_shape": "steady",
}


def test_burst_without_a_size_is_refused_on_that_field():
    form = LoadStepForm(data={**BASE, "arrival": "burst"})
    assert not form.is_valid()
    assert "burst_size" in form.errors


def test_poisson_without_a_rate_is_refused_on_that_field():
    form = LoadStepForm(data={**BASE, "arrival": "poisson"})
    assert not form.is_valid()
    assert "request_rate_per_s" in form.errors


def test_shapes_reach_the_spec():
    form = LoadStepForm(
        data={
            **BASE,
            "arrival": "poisson",
            "request_rate_per_s": "3.5",
            "input_tokens_sd": "200",
            "shared_prefix_fraction": "0.5",
        }
    )
    assert form.is_valid(), form.errors
    workload = form.spec_part()["workload"]
    assert workload["arrival"] == "poisson"
    assert workload["request_rate_per_s"] == 3.5
    assert workload["input_tokens_sd"] == 200
    assert workload["shared_prefix_fraction"] == 0.5


def test_closed_loop_is_the_default():
    form = LoadStepForm(data=BASE)
    assert form.is_valid(), form.errors
    assert form.spec_part()["workload"]["arrival"] == "closed"
