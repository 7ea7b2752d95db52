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
