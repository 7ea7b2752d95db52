"""Every URL × (anonymous, viewer, planner, admin) × each method it serves → the expected status.

The routes come from the URLconf and their methods from the views themselves; RULES says who may
read and who may write each one. A new URL without a rule, or without sample arguments when it
takes some, fails here: decide who may use it before it ships.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import get_resolver, reverse
from django.utils import timezone

from core.models import ApiToken
from core.tasks import heartbeat
from inventory.models import MachineImportBatch
from monitoring.models import AlertEvent, AlertRule, AllowedJob, AllowlistEntry
from monitoring.services import target_create
from planner.decisions.services import decision_create
from planner.models import CalibrationProfile
from planner.services import plan_create
from planner.services.pools import pool_create
from tests.i18n.world import _benchmark_run
from tests.inventory.factories import (
    GpuTypeFactory,
    MachineFactory,
    ModelSpecFactory,
    NetworkInterfaceFactory,
    PoolFactory,
)
from tests.planner.conftest import S1_SPEC
from tests.planner.fleet import build_demo_fleet
from tests.security.urlmap import project_routes

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "viewer", "planner", "admin")
WRITE_METHODS = ("post", "put", "patch", "delete")
METHODS = ("get", *WRITE_METHODS)

# Who may do it: P anyone (no login), S any signed-in role, L planner or admin, A admin only.
ALLOWED = {
    "P": set(ROLES),
    "S": {"viewer", "planner", "admin"},
    "L": {"planner", "admin"},
    "A": {"admin"},
}


@dataclass(frozen=True)
class Rule:
    read: str  # who may GET
    write: str  # who may POST/PUT/PATCH/DELETE
    api: bool = False  # anonymous API calls get 401; anonymous page requests a login redirect


def page(read: str = "S", write: str = "L") -> Rule:
    return Rule(read, write)


def api(read: str = "S", write: str = "L") -> Rule:
    return Rule(read, write, api=True)


RULES: dict[str, Rule] = {
    # core
    "home": page(),
    "healthz": page("P"),
    "favicon": page("P"),
    "ops-metrics": page("P"),
    "login": page("P", "P"),
    "logout": page("S", "S"),
    "set_language": page("P", "P"),
    "account-tokens": page("S", "S"),  # everyone manages their own tokens
    "account-token-revoke": page("S", "S"),
    "audit-log": page("A", "A"),
    "password_change": page("S", "S"),  # everyone changes their own password
    "password_reset_confirm": page("P", "P"),  # the link itself is the credential
    "password_reset_complete": page("P"),
    # user management: admins only
    "user-list": page("A", "A"),
    "user-detail": page("A", "A"),
    "user-reset-link": page("A", "A"),
    "audit-log-csv": page("A", "A"),
    # inventory pages
    **{
        f"inventory:{name}": page()
        for name in (
            "index",
            "fleet-summary",
            "gputype-list",
            "gputype-detail",
            "pool-list",
            "pool-detail",
            "machine-list",
            "machine-detail",
            "machine-export",
            "modelspec-list",
            "modelspec-detail",
        )
    },
    **{
        f"inventory:{name}": page("L", "L")
        for name in (
            "gputype-create",
            "gputype-update",
            "gputype-delete",
            "pool-create",
            "pool-update",
            "pool-delete",
            "machine-create",
            "machine-update",
            "machine-delete",
            "machine-import",
            "machine-import-preview",
            "modelspec-create",
            "modelspec-update",
            "modelspec-delete",
            "modelspec-import",
        )
    },
    # planner pages: everyone reads plans; creating them is the planner's
    **{
        f"planner:{name}": page()
        for name in ("plan-list", "plan-compare", "rules", "plan-detail", "plan-export")
    },
    "planner:wizard-start": page("L", "L"),
    "planner:wizard-step": page("L", "L"),
    "planner:wizard-preview": page("L", "L"),
    "planner:plan-what-if": page("S", "L"),  # anyone may look at a what-if; saving it is writing
    "planner:plan-rerun": page("L", "L"),
    # load benchmarks: they send traffic to servers, so planners and admins only (issue 28)
    **{
        f"benchmarks:{name}": page("L", "L")
        for name in ("list", "detail", "progress", "cancel", "calibrate", "evidence", "export")
    },
    **{
        f"benchmark-{name}": api("L", "L")
        for name in ("list", "detail", "cancel", "export-csv", "export-json")
    },
    # removing the demo machines is a write to the inventory: planners and admins (issue 30)
    "inventory:demo-remove": page("L", "L"),
    # pool plans: everyone reads them; the "several models" wizard creates them, like the wizard
    "planner:pool-wizard": page("L", "L"),
    "planner:pool-plan-list": page(),
    "planner:pool-plan-detail": page(),
    "planner:pool-plan-what-if": page("S", "L"),  # anyone may look; saving it is writing
    "planner:pool-plan-bundle": page(),
    "pool-plan-list": api(),
    "pool-plan-detail": api(),
    # decisions pages
    **{
        f"decisions:{name}": page()
        for name in ("list", "detail", "revisions", "diff", "print", "export-markdown")
    },
    **{
        f"decisions:{name}": page("L", "L")
        for name in (
            "create",
            "create-from-plan",
            "create-from-pool-plan",
            "edit",
            "accept",
            "reject",
            "supersede",
            "successor",
        )
    },
    # monitoring pages
    **{
        f"monitoring:{name}": page()
        for name in (
            "overview",
            "overview-tiles",
            "target-list",
            "target-detail",
            "target-panels",
            "event-list",
            "machines",
            "machines-grid",
            "calibration-list",
            "calibration-detail",
            "plan-reality",
            "pool-plan-reality",
            "decision-reality",
        )
    },
    **{
        f"monitoring:{name}": page("L", "L")
        for name in (
            "target-create",
            "target-edit",
            "target-delete",
            "target-evidence",
            "machines-register",  # creates GPU targets
            "calibration-fit",  # stores a profile
            "calibration-replan",  # saves a plan
        )
    },
    # where pollers and webhooks may connect: admins only (issue 15)
    "monitoring:allowlist": page("A", "A"),
    "monitoring:allowlist-delete": page("A", "A"),
    # which Prometheus jobs read-only targets may read: admins only (issue 33)
    "monitoring:allowed-job-create": page("A", "A"),
    "monitoring:allowed-job-delete": page("A", "A"),
    # API
    "api-root": api(),
    "api-schema": api(),
    "api-docs": api(),
    "inventory-fleet-summary": api(),
    **{
        name: api()
        for name in (
            "gputype-list",
            "gputype-detail",
            "pool-list",
            "pool-detail",
            "machine-list",
            "machine-detail",
            "nic-list",
            "nic-detail",
            "modelspec-list",
            "modelspec-detail",
            "modelspec-import-config",
            "plan-list",
            "plan-compare",
            "plan-detail",
            "plan-configs",
            "plan-export",
            "plan-rerun",
            "decision-list",
            "decision-from-plan",
            "decision-from-pool-plan",
            "decision-detail",
            "decision-accept",
            "decision-diff",
            "decision-evidence",
            "decision-export",
            "decision-reject",
            "decision-revision",
            "decision-revisions",
            "decision-supersede",
        )
    },
    "plan-evaluate": api("S", "S"),  # computes and saves nothing
    **{
        f"monitoring-api:{name}": api()
        for name in (
            "overview",
            "fleet-series",
            "target-list",
            "target-detail",
            "target-series",
            "target-state",
            "alert-rule-list",
            "alert-rule-detail",
            "event-list",
            "event-detail",
            "api-root",
            "target-plan-comparison",
            "calibration-profile-list",  # anyone reads; fitting one (POST) is the planner's
            "calibration-profile-detail",
        )
    },
    "monitoring-api:alert-rule-webhook": api("A", "A"),  # webhooks are admins' (issue 15)
}

SAMPLE_KWARGS = {
    "account-token-revoke": lambda w: {"pk": w["token"].pk},
    "password_reset_confirm": lambda w: {"uidb64": "MQ", "token": "set-password"},
    "user-detail": lambda w: {"pk": w["person"].pk},
    "user-reset-link": lambda w: {"pk": w["person"].pk},
    "inventory:gputype-detail": lambda w: {"pk": w["gpu_type"].pk},
    "inventory:gputype-update": lambda w: {"pk": w["gpu_type"].pk},
    "inventory:gputype-delete": lambda w: {"pk": w["gpu_type"].pk},
    "inventory:pool-detail": lambda w: {"pk": w["pool"].pk},
    "inventory:pool-update": lambda w: {"pk": w["pool"].pk},
    "inventory:pool-delete": lambda w: {"pk": w["pool"].pk},
    "inventory:machine-detail": lambda w: {"pk": w["machine"].pk},
    "inventory:machine-update": lambda w: {"pk": w["machine"].pk},
    "inventory:machine-delete": lambda w: {"pk": w["machine"].pk},
    "inventory:machine-export": lambda w: {"fmt": "csv"},
    "inventory:machine-import-preview": lambda w: {"token": w["import_batch"].token},
    "inventory:modelspec-detail": lambda w: {"pk": w["model_spec"].pk},
    "inventory:modelspec-update": lambda w: {"pk": w["model_spec"].pk},
    "inventory:modelspec-delete": lambda w: {"pk": w["model_spec"].pk},
    "planner:wizard-step": lambda w: {"step": "model"},
    "planner:wizard-preview": lambda w: {"step": "model"},
    "planner:plan-detail": lambda w: {"public_id": w["plan"].public_id},
    "planner:plan-what-if": lambda w: {"public_id": w["plan"].public_id},
    "planner:plan-rerun": lambda w: {"public_id": w["plan"].public_id},
    **{
        f"benchmarks:{name}": (lambda w: {"public_id": w["benchmark"].public_id})
        for name in ("detail", "progress", "cancel", "calibrate", "evidence")
    },
    "benchmarks:export": lambda w: {"public_id": w["benchmark"].public_id, "fmt": "json"},
    **{
        f"benchmark-{name}": (lambda w: {"public_id": w["benchmark"].public_id})
        for name in ("detail", "cancel", "export-csv", "export-json")
    },
    "planner:pool-plan-detail": lambda w: {"public_id": w["pool_plan"].public_id},
    "planner:pool-plan-what-if": lambda w: {"public_id": w["pool_plan"].public_id},
    "planner:pool-plan-bundle": lambda w: {"public_id": w["pool_plan"].public_id},
    "pool-plan-detail": lambda w: {"public_id": w["pool_plan"].public_id},
    "planner:plan-export": lambda w: {"public_id": w["plan"].public_id, "fmt": "json"},
    "decisions:create-from-plan": lambda w: {"public_id": w["plan"].public_id},
    "decisions:create-from-pool-plan": lambda w: {"public_id": w["pool_plan"].public_id},
    **{
        f"decisions:{name}": (lambda w: {"number": w["decision"].number})
        for name in (
            "detail",
            "edit",
            "accept",
            "reject",
            "supersede",
            "successor",
            "revisions",
            "diff",
            "print",
            "export-markdown",
        )
    },
    **{
        f"monitoring:{name}": (lambda w: {"pk": w["target"].pk})
        for name in (
            "target-detail",
            "target-edit",
            "target-delete",
            "target-panels",
            "target-evidence",
        )
    },
    "gputype-detail": lambda w: {"pk": w["gpu_type"].pk},
    "pool-detail": lambda w: {"pk": w["pool"].pk},
    "machine-detail": lambda w: {"pk": w["machine"].pk},
    "nic-detail": lambda w: {"pk": w["nic"].pk},
    "modelspec-detail": lambda w: {"pk": w["model_spec"].pk},
    "plan-detail": lambda w: {"public_id": w["plan"].public_id},
    "plan-configs": lambda w: {"public_id": w["plan"].public_id},
    "plan-export": lambda w: {"public_id": w["plan"].public_id, "fmt": "json"},
    "plan-rerun": lambda w: {"public_id": w["plan"].public_id},
    **{
        f"decision-{name}": (lambda w: {"number": w["decision"].number})
        for name in (
            "detail",
            "accept",
            "diff",
            "evidence",
            "export",
            "reject",
            "revisions",
            "supersede",
        )
    },
    "decision-revision": lambda w: {"number": w["decision"].number, "revision": 1},
    "monitoring-api:target-detail": lambda w: {"pk": w["target"].pk},
    "monitoring-api:target-series": lambda w: {"pk": w["target"].pk},
    "monitoring-api:target-state": lambda w: {"pk": w["target"].pk},
    "monitoring-api:alert-rule-detail": lambda w: {"pk": w["alert_rule"].pk},
    "monitoring-api:alert-rule-webhook": lambda w: {"pk": w["alert_rule"].pk},
    "monitoring:allowlist-delete": lambda w: {"pk": w["allowlist_entry"].pk},
    "monitoring:allowed-job-delete": lambda w: {"pk": w["allowed_job"].pk},
    "monitoring-api:target-plan-comparison": lambda w: {"pk": w["linked_target"].pk},
    "monitoring:calibration-detail": lambda w: {"public_id": w["calibration"].public_id},
    "monitoring:plan-reality": lambda w: {"public_id": w["plan"].public_id},
    "monitoring:decision-reality": lambda w: {"number": w["decision"].number},
    "monitoring:pool-plan-reality": lambda w: {"public_id": w["pool_plan"].public_id},
    "monitoring:calibration-replan": lambda w: {"public_id": w["calibration"].public_id},
    "monitoring-api:calibration-profile-detail": lambda w: {
        "public_id": w["calibration"].public_id
    },
    "monitoring-api:event-detail": lambda w: {"pk": w["event"].pk},
}

ROUTES = project_routes()


def test_every_url_has_a_rule_and_sample_arguments():
    missing_rules = [r.name for r in ROUTES if r.name not in RULES]
    missing_kwargs = [r.name for r in ROUTES if r.kwargs and r.name not in SAMPLE_KWARGS]
    stale = sorted(set(RULES) - {r.name for r in ROUTES})

    assert not missing_rules, f"URLs without a permission rule: {missing_rules}"
    assert not missing_kwargs, f"URLs without sample arguments: {missing_kwargs}"
    assert not stale, f"rules for URLs that no longer exist: {stale}"


def _methods(name: str) -> list[str]:
    """Return the HTTP methods the view of URL `name` serves, read from the view itself."""
    callback = _callback(name)
    if hasattr(callback, "actions"):  # DRF viewset route (DRF adds "head" once it has served)
        return sorted((m for m in callback.actions if m in METHODS), key=_method_order)
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view is not None:
        found = [m for m in ("get", *WRITE_METHODS) if hasattr(view, m)]
        return [m for m in found if not (m == "put" and "post" in found and not _is_api(view))]
    # Function views: ask them with every method; 405 means not served.
    return ["get", "post"]


def _is_api(view: type) -> bool:
    return hasattr(view, "permission_classes")


def _method_order(method: str) -> int:
    return METHODS.index(method)


def _callback(name: str) -> Any:
    return get_resolver().resolve(_url_for(name, _PLACEHOLDER_WORLD)).func


class _Anything:
    pk = 1
    number = 1
    public_id = "00000000-0000-0000-0000-000000000001"
    token = "00000000-0000-0000-0000-000000000001"


_PLACEHOLDER_WORLD = {key: _Anything() for key in (
    "token", "gpu_type", "pool", "machine", "import_batch", "model_spec", "plan", "decision",
    "target", "nic", "alert_rule", "event", "allowlist_entry", "allowed_job", "person",
    "linked_target",
    "calibration", "pool_plan", "benchmark",
)}  # fmt: skip


def _url_for(name: str, world: dict[str, Any]) -> str:
    kwargs = SAMPLE_KWARGS[name](world) if name in SAMPLE_KWARGS else {}
    return reverse(name, kwargs=kwargs)


@pytest.fixture
def world(db) -> dict[str, Any]:
    """One object of every kind a URL can name, owned by the admin where ownership matters."""
    users = {}
    for role in ("viewer", "planner", "admin"):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.create_user(username=f"{role}-user", password="pw-x-12345")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        users[role] = user
    build_demo_fleet()
    gpu_type = GpuTypeFactory(slug="matrix-gpu", name="Matrix GPU")
    pool = PoolFactory(name="matrix-pool")
    machine = MachineFactory(hostname="matrix-01", gpu_type=gpu_type, pool=pool)
    plan = plan_create(spec=dict(S1_SPEC), actor=users["planner"], title="S1 for the matrix")
    target = target_create(name="matrix-target", kind="vllm", base_url="http://127.0.0.1:9/v")
    rule = AlertRule.objects.filter(target=target).first()
    now = timezone.now()
    linked_target = target_create(
        name="matrix-replica", kind="vllm", base_url="http://127.0.0.1:9/r", plan=plan
    )
    calibration = CalibrationProfile.objects.create(
        key="matrix-gpu/llama/bf16",
        gpu="matrix-gpu",
        model_family="llama",
        weight_dtype="bf16",
        version=1,
        factors={},
        window_start=now,
        window_end=now,
        observations=0,
    )
    pool_plan = pool_create(
        spec={
            "hardware": {"pool": "a800-pool"},
            "models": [{"model": "llama-3.1-8b"}, {"model": "qwen2.5-7b"}],
        },
        actor=users["planner"],
    )
    benchmark = _benchmark_run(linked_target, plan, users["planner"], now)
    heartbeat()  # /healthz answers 200 only with a live worker
    return {
        "benchmark": benchmark,
        "pool_plan": pool_plan,
        "users": users,
        "person": users["viewer"],
        "token": ApiToken.issue(user=users["admin"], name="matrix")[0],
        "gpu_type": gpu_type,
        "pool": pool,
        "machine": machine,
        "nic": NetworkInterfaceFactory(machine=machine, name="eth9"),
        "model_spec": ModelSpecFactory(slug="matrix-model", name="Matrix model"),
        "import_batch": MachineImportBatch.objects.create(
            created_by=users["planner"], file_format="csv", rows=[]
        ),
        "plan": plan,
        "decision": decision_create(actor=users["planner"], title="Keep mp on the A800 pair"),
        "target": target,
        "linked_target": linked_target,
        "calibration": calibration,
        "alert_rule": rule,
        "allowlist_entry": AllowlistEntry.objects.create(name="10.9.0.0/24"),
        "allowed_job": AllowedJob.objects.create(name="matrix-job"),
        "event": AlertEvent.objects.create(
            rule=rule, target=target, opened_at=now, value=1.0, last_value=1.0, message="m"
        ),
    }


def _client(role: str, world: dict[str, Any]) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


def _is_login_redirect(response: Any) -> bool:
    """Return whether the page sent an anonymous user to sign in (logout's redirect is not)."""
    return response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.name)
def test_permission_matrix(route, world):
    rule = RULES[route.name]
    url = _url_for(route.name, world)
    problems = []
    for method in _methods(route.name):
        level = rule.read if method == "get" else rule.write
        for role in ROLES:
            client = _client(role, world)
            response = getattr(client, method)(url, content_type="application/json")
            if response.status_code == 405:
                continue  # the function view does not serve this method
            expected = "allowed" if role in ALLOWED[level] else "denied"
            if not _matches(response, expected, role=role, method=method, api=rule.api):
                problems.append(f"{method.upper()} as {role}: {response.status_code}, {expected}")
    assert not problems, f"{route.name} ({url}):\n  " + "\n  ".join(problems)


def _matches(response: Any, expected: str, *, role: str, method: str, api: bool) -> bool:
    status = response.status_code
    if status >= 500:
        return False
    if expected == "denied":
        if role == "anonymous":
            return status == 401 if api else _is_login_redirect(response)
        return status == 403
    if status in (401, 403) or _is_login_redirect(response):
        return False
    # Reads of objects that exist must be found; a write may meet a 404 (deleted by a role before).
    return status != 404 if method == "get" else True
