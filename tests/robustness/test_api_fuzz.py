"""Schemathesis against every documented API operation, authenticated as a planner.

The schema is the one /api/v1/schema/ serves (drf-spectacular's generator, in-process); requests
go straight to Django's WSGI application inside the test's transaction, so nothing listens on a
port. Checks: no 5xx, every documented response matches its schema (body and content type).
Bounded: SERVEPLAN_FUZZ_EXAMPLES examples per operation (default 15), derandomised unless
SERVEPLAN_FUZZ_RANDOM=1, so that CI is reproducible and finishes in a few minutes on 2 cores.
"""

from __future__ import annotations

import json
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


# Hostile JSON that generated examples never contain: a body nested 100,000 deep and numbers
# beyond what a float or a 64-bit column holds, sent raw in every property of every JSON body.
HOSTILE_JSON = {
    "nested-100000-deep": "[" * 100_000 + "]" * 100_000,
    "overflows-to-infinity": "1e999",
    "beyond-64-bits": "9" * 400,
    "largest-negative-float": "-1.7976931348623157e308",
}


def _json_body_operations() -> list[tuple[str, str, list[str]]]:
    """Return (path, method, body property names) of every operation taking a JSON body."""
    spec = _schema_dict()
    found = []
    for path, item in sorted(spec["paths"].items()):
        for method, operation in sorted(item.items()):
            content = (operation.get("requestBody") or {}).get("content", {})
            body_schema = content.get("application/json", {}).get("schema", {})
            ref = body_schema.get("$ref", "")
            properties = spec["components"]["schemas"][ref.rsplit("/", 1)[-1]] if ref else {}
            found.append((path, method, sorted(properties.get("properties", {}))))
    return [(p, m, props) for p, m, props in found if props]


@pytest.mark.parametrize(("path", "method", "properties"), _json_body_operations())
def test_hostile_json_in_any_body_property_is_never_a_server_error(
    path, method, properties, seeded, planner_token, wsgi_in_test_transaction
):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {planner_token}")
    values = next((v for prefix, v in seeded.items() if path.startswith(prefix)), {})
    url = path
    for name, value in values.items():
        url = url.replace("{" + name + "}", str(value))
    failures = []
    for prop in properties:
        for label, raw in HOSTILE_JSON.items():
            body = "{" + json.dumps(prop) + ": " + raw + "}"
            response = getattr(client, method)(url, body, content_type="application/json")
            if response.status_code >= 500:
                failures.append(f"{prop} = {label}: {response.status_code}")
    assert not failures, f"{method.upper()} {url}:\n  " + "\n  ".join(failures)
