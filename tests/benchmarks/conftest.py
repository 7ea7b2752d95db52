"""A simulated llama-8b server registered as a target, and a plan for the same model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from monitoring.services import target_create
from monitoring.simulator import Simulator
from planner.services import plan_create
from tests.planner.fleet import build_demo_fleet

LLAMA_8B_SPEC = {
    "model": "llama-3.1-8b",
    "weight_dtype": "bf16",
    "max_model_len": 8192,
    "workload": {"concurrency": 4, "avg_input_tokens": 128, "avg_output_tokens": 16},
    "hardware": {"pool": "a100-pool"},
}


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    sim = Simulator(port=0, vllm_count=1, ray=False, gpu_machines=0, faults=False)
    sim.start()
    yield sim.targets()[0].base_url  # llama-8b: meta-llama/Llama-3.1-8B-Instruct
    sim.stop()


@pytest.fixture
def llama_plan(planner):
    build_demo_fleet()
    return plan_create(spec={**LLAMA_8B_SPEC}, actor=planner)


@pytest.fixture
def sim_target(db, sim_url):
    return target_create(name="sim-llama-8b", kind="vllm", base_url=sim_url)


@pytest.fixture
def linked_target(sim_target, llama_plan):
    sim_target.plan = llama_plan
    sim_target.save(update_fields=["plan"])
    return sim_target


@pytest.fixture
def no_enqueue(monkeypatch):
    """Record what would be sent to the benchmarks queue instead of sending it."""
    sent: list[dict] = []
    from benchmarks import services

    monkeypatch.setattr(
        services.current_app, "send_task", lambda name, kwargs, queue: sent.append(
            {"name": name, "kwargs": kwargs, "queue": queue})
    )  # fmt: skip
    return sent
