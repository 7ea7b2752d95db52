"""The wizard's precision step: the vLLM version whose memory rules size the KV cache (#13)."""

from planner.forms.wizard import PrecisionStepForm

BASE = {
    "weight_dtype": "bf16",
    "kv_cache_dtype": "auto",
    "max_model_len": 8192,
    "gpu_memory_utilization": 0.9,
}


def test_vllm_version_is_optional_and_passed_to_the_spec():
    form = PrecisionStepForm(data={**BASE, "vllm_version": "0.19.0"}, model_limit=32768)
    assert form.is_valid(), form.errors
    assert form.spec_part()["vllm_version"] == "0.19.0"

    empty = PrecisionStepForm(data=BASE, model_limit=32768)
    assert empty.is_valid(), empty.errors
    assert "vllm_version" not in empty.spec_part()


def test_a_version_that_is_not_a_release_number_is_refused_on_its_field():
    form = PrecisionStepForm(data={**BASE, "vllm_version": "nightly"}, model_limit=32768)
    assert not form.is_valid()
    assert "vllm_version" in form.errors
