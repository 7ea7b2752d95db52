"""Schemathesis against every documented API operation, authenticated as a planner.

The schema is the one /api/v1/schema/ serves (drf-spectacular's generator, in-process); requests
go straight to Django's WSGI application inside the test's transaction, so nothing listens on a
port. Checks: no 5xx, every documented response matches its schema (body and content type).
Bounded: SERVEPLAN_FUZZ_EXAMPLES examples per operation (default 15), derandomised unless
SERVEPLAN_FUZZ_RANDOM=1, so that CI is reproducible and finishes in a few minutes on 2 cores.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from core.models import ApiToken

pytestmark = [pytest.mark.integration]

MAX_EXAMPLES = int(os.environ.get("SERVEPLAN_FUZZ_EXAMPLES", "50"))

CONFIG = SchemathesisConfig.from_dict(
    {
        "generation": {
            "mode": "all",
            "max-examples": MAX_EXAMPLES,
            "deterministic": os.environ.get("SERVEPLAN_FUZZ_RANDOM") != "1",
            "database": "none",
            # A planner's token is sent on every request; don't fuzz the auth header itself.
            "with-security-parameters": False,
        },
        "phases": {"coverage": {"enabled": False}},
        "checks": {
            "enabled": False,
            "not_a_server_error": {"enabled": True},
            "response_schema_conformance": {"enabled": True},
            "content_type_conformance": {"enabled": True},
        },
    }
)


def _schema_dict() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


schema = schemathesis.openapi.from_dict(_schema_dict(), config=CONFIG)
schema.app = get_wsgi_application()


@pytest.fixture
def planner_token(planner) -> str:
    _, key = ApiToken.issue(user=planner, name="schemathesis")
    return key


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
    plan = plan_create(spec=S2A_SPEC, author=planner)
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


@pytest.fixture
def wsgi_in_test_transaction():
    """Keep Django from closing the test's connection at the end of each in-process request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _aim_at_rows(case, seeded) -> None:
    """Send about half of the generated ids to a row that exists, the rest stay random."""
    if not case.path_parameters:
        return
    for prefix, values in seeded.items():
        if case.path.startswith(prefix):
            for name, value in values.items():
                if name in case.path_parameters and hash(str(case.path_parameters[name])) % 2:
                    case.path_parameters[name] = value
            return


@schema.parametrize()
# The rows are seeded once per operation; examples may change them (that is the point).
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_every_operation_answers_within_its_schema(
    case, seeded, planner_token, wsgi_in_test_transaction
):
    _aim_at_rows(case, seeded)
    case.call_and_validate(headers={"Authorization": f"Token {planner_token}"})
