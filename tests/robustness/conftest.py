"""Rows behind every detail route of the API, shared by the robustness tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def seeded(planner) -> dict[str, dict[str, object]]:
    """Create one row behind every detail route, so that fuzzing reaches past the 404."""
    from django.utils import timezone

    from monitoring.models import AlertEvent
    from monitoring.services import target_create
    from planner.services import plan_create
    from tests.decisions.conftest import complete_decision
    from tests.planner.conftest import S2A_SPEC
    from tests.planner.fleet import build_demo_fleet

    machines = build_demo_fleet()
    machine = machines["a100-01"]
    nic = machine.nics.first()
    plan = plan_create(spec=S2A_SPEC, actor=planner)
    decision = complete_decision(planner, plan=plan)
    target = target_create(name="fuzz-vllm", kind="vllm", base_url="http://127.0.0.1:9/vllm/x")
    rule = target.alert_rules.first()
    now = timezone.now()
    event = AlertEvent.objects.create(
        rule=rule, target=target, opened_at=now, value=1.0, last_value=1.0, message="fuzz"
    )
    from inventory.models import ModelSpec

    return {
        "/api/v1/inventory/gpu-types/": {"id": machine.gpu_type_id},
        "/api/v1/inventory/machines/": {"id": machine.pk},
        "/api/v1/inventory/model-specs/": {"id": ModelSpec.objects.order_by("pk").first().pk},
        "/api/v1/inventory/nics/": {"id": nic.pk},
        "/api/v1/inventory/pools/": {"id": machine.pool_id},
        "/api/v1/monitoring/alert-rules/": {"id": rule.pk},
        "/api/v1/monitoring/events/": {"id": event.pk},
        "/api/v1/monitoring/targets/": {"id": target.pk},
        "/api/v1/plans/": {"public_id": str(plan.public_id)},
        "/api/v1/decisions/": {"number": decision.number, "revision": 1},
    }
