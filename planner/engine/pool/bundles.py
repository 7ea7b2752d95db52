"""A pool plan's deployment bundle for Route A or Route C, from the placements it chose.

Route A: every placed model's vLLM servers on the exact host and GPU indices of its instances,
each with the model's own gpu_memory_utilization, behind one LiteLLM proxy. Route C: one Ray
cluster and one serve config with an application per model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from planner.engine.configs.bundle import build_pool_bundle, build_serve_bundle
from planner.engine.configs.bundle_types import Bundle
from planner.engine.configs.layout import BundleLayout, ServeApp
from planner.engine.configs.pool_alloc import PoolDeployment
from planner.engine.pool.options import SHARED_GPU_FRACTION
from planner.engine.pool.result import PlacedModel
from planner.engine.pool.spec import PoolModel, PoolSpec
from planner.engine.result import Route
from planner.engine.spec import PlanSpec


def placed_layout(placed: PlacedModel) -> BundleLayout:
    """Return a placed model's layout: one single-node instance per replica, as placed."""
    return BundleLayout(
        candidate_id=f"{placed.gpu}:tp{placed.tp}-pp1-r{placed.replicas}:{placed.weight_dtype}",
        tp=placed.tp,
        pp=1,
        replicas=placed.replicas,
        nodes_per_replica=1,
        weight_dtype=placed.weight_dtype,
        hosts=tuple((inst.host,) for inst in placed.instances),
        max_concurrency_per_replica=placed.max_concurrency_total / placed.replicas,
        kv_tokens_per_replica=placed.kv_tokens_per_replica,
        weights_gib_total=placed.weights_gib_per_gpu * placed.tp,
    )


def _placed_spec(m: PoolModel, placed: PlacedModel) -> PlanSpec:
    """Return the model's spec with the memory share the plan gave it (half when it shares)."""
    return dataclasses.replace(m.spec, gpu_memory_utilization=placed.gpu_memory_utilization)


def _serve_app(m: PoolModel, placed: PlacedModel) -> ServeApp:
    return ServeApp(
        spec=_placed_spec(m, placed),
        layout=placed_layout(placed),
        name=m.name,
        route_prefix=f"/{m.name}",
        gpu_share=SHARED_GPU_FRACTION if placed.shares_gpus else 1.0,
    )


def _deployment(m: PoolModel, placed: PlacedModel) -> PoolDeployment:
    return PoolDeployment(
        name=m.name,
        spec=_placed_spec(m, placed),
        layout=placed_layout(placed),
        gpu_indices=tuple(inst.gpu_indices for inst in placed.instances),
        shares_gpus=placed.shares_gpus,
    )


def pool_bundle(spec: PoolSpec, placed: Sequence[PlacedModel], route: Route) -> Bundle:
    """Return the bundle that deploys the placed models as `route` (A or C).

    Raise ValueError for another route or a placed model the spec lacks; BundleClash or
    UnknownHost when the allocation would not hold.
    """
    models = {m.name: m for m in spec.models}
    missing = [p.name for p in placed if p.name not in models]
    if missing:
        raise ValueError(f"placed models the spec lacks: {', '.join(missing)}")
    nodes = spec.hardware.nodes
    if route == Route.C:
        return build_serve_bundle([_serve_app(models[p.name], p) for p in placed], nodes)
    if route == Route.A:
        return build_pool_bundle([_deployment(models[p.name], p) for p in placed], nodes)
    raise ValueError(f"a pool is deployed as Route A or C, not {route}")
