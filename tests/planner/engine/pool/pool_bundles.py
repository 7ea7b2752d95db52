"""Pool bundles the bundle validations share: 70B + 8B + 7B on 2 x 8 A100 (the scenario)."""

from __future__ import annotations

from planner.engine.configs.bundle_types import Bundle
from planner.engine.pool import plan_pool, pool_spec_from_dict
from planner.engine.pool.bundles import pool_bundle
from planner.engine.result import Route
from tests.planner.engine.pool.test_pool_scenarios import _a100_pool as a100_pool


def a100_pool_bundle(route: Route = Route.A) -> Bundle:
    """Return the 70B + 8B + 7B pool's bundle for `route`."""
    spec = pool_spec_from_dict(a100_pool())
    return pool_bundle(spec, plan_pool(spec).placed, route)


SMALL_MODELS = ("qwen3-8b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "qwen3-8b", "mistral-7b")


def small_models_sharing(*, share_gpus: bool = True, itl_slo_ms: float | None = None) -> dict:
    """Return six small models at light load on one 8 x L40S node, sharing GPUs when allowed."""
    workload: dict = {"concurrency": 4, "avg_input_tokens": 512, "avg_output_tokens": 128}
    if itl_slo_ms is not None:
        workload["itl_slo_ms"] = itl_slo_ms
    return {
        "hardware": {"nodes": [{"hostname": "l40s-a", "gpu": "l40s", "gpu_count": 8}]},
        "share_gpus": share_gpus,
        "models": [
            {"name": f"small-{i}", "model": m, "max_model_len": 4096, "workload": dict(workload)}
            for i, m in enumerate(SMALL_MODELS)
        ],
    }


def shared_gpu_bundle(route: Route = Route.A) -> Bundle:
    """Return the six small models' bundle for `route`, two models' servers per GPU."""
    spec = pool_spec_from_dict(small_models_sharing())
    return pool_bundle(spec, plan_pool(spec).placed, route)
