import pytest

from tests.planner.fleet import build_demo_fleet

S1_SPEC = {
    "model": "llama-3.1-70b",
    "weight_dtype": "int8",
    "max_model_len": 8192,
    "workload": {"concurrency": 32, "avg_input_tokens": 1024, "avg_output_tokens": 256},
    "hardware": {"hostnames": ["a800-01", "a800-02"]},
}
S2A_SPEC = {
    "model": "qwen2.5-32b",
    "weight_dtype": "bf16",
    "max_model_len": 8192,
    "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
    "hardware": {"pool": "a100-pool"},
}


@pytest.fixture
def demo_fleet(db):
    return build_demo_fleet()


@pytest.fixture
def s1_spec():
    return {**S1_SPEC}


@pytest.fixture
def s2a_spec():
    return {**S2A_SPEC}
