"""The demo's plan for the simulated llama-8b server, so `make run` shows the whole loop:
plan → benchmark the demo server → compare → calibrate (idempotent)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q

from core.roles import ADMIN
from monitoring.models import Target
from monitoring.services import target_update
from planner.models import Plan
from planner.services import plan_create

DEMO_PLAN_TITLE = "Demo: Llama 3.1 8B on the shared A100 pool"
DEMO_TARGET = "sim-llama-8b"  # register_simulator_targets' name for the simulator's llama-8b
DEMO_SPEC: dict[str, Any] = {
    "model": "llama-3.1-8b",
    "weight_dtype": "bf16",
    "max_model_len": 8192,
    "workload": {
        "concurrency": 16,
        "avg_input_tokens": 512,
        "avg_output_tokens": 128,
        "ttft_slo_ms": 1000,
        "itl_slo_ms": 50,
    },
    "hardware": {"pool": "a100-shared"},
}


@transaction.atomic
def load_demo_plan() -> Plan | None:
    """Create the demo plan (the first admin's) when missing and link the demo server to it;
    None without the server or an admin."""
    target = Target.objects.filter(name=DEMO_TARGET).first()
    if target is None:
        return None
    plan = Plan.objects.filter(title=DEMO_PLAN_TITLE).order_by("-created_at").first()
    if plan is None:
        admins = Q(is_superuser=True) | Q(groups__name=ADMIN)
        author = get_user_model().objects.filter(admins).order_by("pk").first()
        if author is None:
            return None
        plan = plan_create(spec=DEMO_SPEC, actor=author, title=DEMO_PLAN_TITLE)
    if target.plan_id is None:
        target_update(target=target, plan=plan)
    return plan
