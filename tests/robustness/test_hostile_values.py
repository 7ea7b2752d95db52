"""Issue 33, the generic guard: hostile values in every JSON body of the API are never a 5xx.

For every operation of the OpenAPI schema (drf-spectacular) that takes a JSON body, hypothesis
puts one hostile value at one place of a body that is otherwise valid (the row's own
representation for PUT and PATCH, a plannable spec for the plan endpoints): lone surrogates and
NULs in strings, keys and lists, empty objects in lists, wrong types and huge or tiny numbers,
at the top level and inside nested objects and list rows. The answer must not be a server error.
Bounded and derandomised (EXAMPLES per operation), so it runs in the normal suite.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from tests.planner.conftest import S2A_SPEC

pytestmark = pytest.mark.django_db

EXAMPLES = 12
HOSTILE_STRINGS = ["\ud800", "x\udfffy", "\x00", "a\x00b", "\ud83d", "\udc00\ud800"]
HOSTILE = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.sampled_from(HOSTILE_STRINGS).map(lambda s: [s]),
    st.sampled_from(HOSTILE_STRINGS).map(lambda s: {s: s}),
    st.just([{}]),
    st.just([{}, {}]),
    st.just({}),
    st.just([[]]),
    st.sampled_from([5, -1, 0, 1e308, -1e308, 1e-320, 2**63 - 1, -(2**63) + 1, 0.5]),
    st.sampled_from([True, None, "", "text", [], [5], ["text", 5]]),
)
# Bodies that reach past validation for the operations whose row cannot be read back.
BASE_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/api/v1/plans/evaluate/"): S2A_SPEC,
    ("post", "/api/v1/plans/"): {"spec": S2A_SPEC, "title": "hostile"},
    ("post", "/api/v1/decisions/"): {"title": "hostile values"},
}


@cache
def _operations() -> tuple[tuple[str, str], ...]:
    """Return (method, path) of every operation that takes a JSON body."""
    spec = SchemaGenerator().get_schema(request=None, public=True)
    return tuple(
        (method, path)
        for path, item in sorted(spec["paths"].items())
        for method, operation in sorted(item.items())
        if "application/json" in (operation.get("requestBody") or {}).get("content", {})
    )


def _slots(value: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    """Return the places of a body a hostile value may go: every key, nested up to 3 levels
    (the first row of a list stands for every row), plus a new key at each object."""
    slots: list[tuple] = []
    if isinstance(value, dict) and depth < 3:
        slots.append((*prefix, "hostile-extra-key"))
        for key, child in value.items():
            slots.append((*prefix, key))
            slots.extend(_slots(child, (*prefix, key), depth + 1))
    elif isinstance(value, list) and value and depth < 3:
        slots.extend(_slots(value[0], (*prefix, 0), depth + 1))
    return slots


def _with(body: Any, slot: tuple, value: Any) -> Any:
    """Return a copy of `body` with `value` at `slot`."""
    out = json.loads(json.dumps(body))
    target = out
    for step in slot[:-1]:
        target = target[step]
    target[slot[-1]] = value
    return out


def _url(path: str, seeded: dict[str, dict[str, object]]) -> str:
    values = next((v for prefix, v in seeded.items() if path.startswith(prefix)), {})
    for name, value in values.items():
        path = path.replace("{" + name + "}", str(value))
    return path


def _base_body(client: APIClient, method: str, path: str, url: str) -> dict[str, Any]:
    if (method, path) in BASE_BODIES:
        return BASE_BODIES[(method, path)]
    if "{" in path and method in ("put", "patch"):
        response = client.get(url)
        if response.status_code == 200:
            return {k: v for k, v in response.json().items() if v is not None}
    return {}


@pytest.mark.parametrize(("method", "path"), _operations(), ids=lambda v: str(v))
def test_no_hostile_value_in_a_json_body_is_a_server_error(method, path, seeded, admin_user):
    client = APIClient()
    client.force_login(admin_user)
    url = _url(path, seeded)
    base = _base_body(client, method, path, url)
    slots = _slots(base) or [("hostile-extra-key",)]

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(slot=st.sampled_from(slots), value=HOSTILE)
    def send(slot: tuple, value: Any) -> None:
        # ensure_ascii: a lone surrogate travels as its \\ud800 escape, as a hostile client sends it
        body = json.dumps(_with(base, slot, value), ensure_ascii=True)
        response = getattr(client, method)(url, body, content_type="application/json")
        assert response.status_code < 500, (
            f"{method.upper()} {url} with {slot} = {value!r}: {response.status_code}"
        )

    send()
