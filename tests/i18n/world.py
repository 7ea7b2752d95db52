"""Sample objects for rendering every page: small, with values that are not English prose."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone


def build_world(admin_user: Any) -> dict[str, Any]:
    """A small fleet, a plan, a decision and two monitored targets with samples.

    Values are hostnames, slugs and numbers: nothing of the data itself reads as English prose.
    """
    from inventory.models import GpuType, ModelSpec
    from monitoring.models import AlertEvent, AlertRule, Sample
    from monitoring.services import target_create
    from planner.decisions.services import decision_create_from_plan, decision_reject
    from planner.models import CalibrationProfile
    from planner.services.plans import plan_create
    from tests.planner.fleet import build_demo_fleet

    machines = build_demo_fleet()
    GpuType.objects.update(source="ds-2021")
    ModelSpec.objects.update(source="hf:cfg")
    spec = {
        "model": "qwen2.5-32b",
        "weight_dtype": "bf16",
        "max_model_len": 8192,
        "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "hardware": {"hostnames": ["a100-01", "a100-02"]},
        "title": "q32-a100",
    }
    plan = plan_create(spec=spec, actor=admin_user, title="q32-a100")
    plan_b = plan_create(
        spec={**spec, "hardware": {"hostnames": ["a800-01", "a800-02"]}},
        actor=admin_user,
        title="q32-a800",
    )
    # Route B on a shared pool, one replica TP4 × PP2 (DOMAIN.md S3): placement groups, Ray.
    plan_shared = plan_create(
        spec={
            "model": "qwen2.5-72b",
            "weight_dtype": "bf16",
            "max_model_len": 65536,
            "rope_scaling_factor": 4.0,
            "workload": {"concurrency": 16, "traffic_shape": "bursty"},
            "pinned_layout": {"tp": 4, "pp": 2, "replicas": 1},
            "operations": {"models_change_often": True},
            "hardware": {
                "pool_kind": "shared",
                "node_count": 2,
                "gpus_per_node": 4,
                "gpu": "a100-80g-sxm",
                "inter_node_gbps": 25,
            },
        },
        actor=admin_user,
        title="q72-shared",
    )
    # A decision's prefilled text is written in its author's language: call this inside
    # translation.override() to create it in another language.
    decision = decision_create_from_plan(plan=plan, actor=admin_user, title="d-q32")
    rejected = decision_create_from_plan(plan=plan_shared, actor=admin_user, title="d-q72")
    decision_reject(decision=rejected, actor=admin_user)
    vllm = target_create(name="vllm-01", kind="vllm", base_url="http://127.0.0.1:9/v1")
    ray = target_create(name="ray-01", kind="ray", base_url="http://127.0.0.1:9/ray")
    # A target whose last polls failed: its error kind, message and partial errors show too.
    down = target_create(name="vllm-02", kind="vllm", base_url="http://127.0.0.1:9/v2")
    type(down).objects.filter(pk=down.pk).update(
        last_poll_at=timezone.now(),
        last_status="error",
        last_error="[Errno 111] Connection refused",
        last_error_kind="connect",
        last_error_at=timezone.now(),
        consecutive_failures=4,
        info={"partial_errors": [{"where": "/metrics", "kind": "timeout", "message": "timed out"}]},
    )
    # Default alert rule names are stored data, written in English by design
    # (monitoring/services.py); give them neutral names so they do not read as findings.
    for n, rule in enumerate(AlertRule.objects.order_by("pk"), start=1):
        AlertRule.objects.filter(pk=rule.pk).update(name=f"r-{n:02d}")
    now = timezone.now()
    rows = []
    for i in range(6):
        ts = now - timedelta(minutes=6 - i)
        for series, value in (
            ("vllm.generation_tokens_per_s", 900.0 + i),
            ("vllm.prompt_tokens_per_s", 3000.0 + i),
            ("vllm.requests_running", 12.0),
            ("vllm.requests_waiting", 1.0),
            ("vllm.kv_cache_usage_perc", 0.42),
            ("vllm.ttft_seconds.p95", 0.31),
        ):
            rows.append(Sample(target=vllm, series=series, labels="", ts=ts, value=value))
    Sample.objects.bulk_create(rows)
    rule = AlertRule.objects.filter(target=vllm).order_by("pk").first()
    AlertEvent.objects.create(
        rule=rule, target=vllm, opened_at=now, value=0.97, last_value=0.95, message="e-01"
    )
    calibration = CalibrationProfile.objects.create(
        key="a100-80g-sxm/llama/bf16",
        gpu="a100-80g-sxm",
        model_family="llama",
        weight_dtype="bf16",
        version=1,
        factors={
            "kv_overhead_gib": {"value": 0.4, "stderr": 0.1, "fitted": True, "unit": "GiB"},
            "decode_efficiency": {"value": 0.9, "stderr": 0.02, "fitted": True, "unit": "×"},
        },
        window_start=now - timedelta(hours=1),
        window_end=now,
        sources=[{"target": vllm.name, "plan": str(plan.public_id)}],
        residuals=[
            {
                "source": vllm.name,
                "quantity": "itl_ms",
                "concurrency": 12.0,
                "measured": 31.0,
                "before": 27.0,
                "after": 30.5,
            },
        ],  # fmt: skip
        observations=1,
        rms_error_before_pct=12.9,
        rms_error_after_pct=1.6,
    )
    benchmark = _benchmark_run(vllm, plan, admin_user, now)
    pool_plan = _pool_plan(admin_user)
    return {
        "pool_plan": pool_plan,
        "benchmark": benchmark,
        "calibration": calibration,
        "machine": machines["a100-01"],
        "gpu_type": machines["a100-01"].gpu_type,
        "pool": machines["a100-01"].pool,
        "modelspec": ModelSpec.objects.order_by("pk").first(),
        "plan": plan,
        "plan_b": plan_b,
        "plan_shared": plan_shared,
        "rejected_decision": rejected,
        "decision": decision,
        "vllm_target": vllm,
        "ray_target": ray,
        "down_target": down,
    }


def _pool_plan(user: Any) -> Any:
    """Three models on the A800 pair, one that fits nowhere (a reason and its hints shown)."""
    from planner.services.pools import pool_create

    return pool_create(
        spec={
            "hardware": {"hostnames": ["a800-01", "a800-02"]},
            "operations": {"models_change_often": True, "self_healing_slo": True},
            "models": [
                {"name": "chat", "model": "llama-3.1-70b", "max_model_len": 8192},
                {"name": "router", "model": "qwen3-8b", "max_model_len": 8192},
                {"name": "huge", "model": "llama-3.1-405b", "max_model_len": 131072},
            ],
        },
        actor=user,
        title="pool-a800",
    )


def _benchmark_run(target: Any, plan: Any, user: Any, now: Any) -> Any:
    """A finished two-level sweep with the plan beside it (summaries from the real code)."""
    from benchmarks.config import parse_config
    from benchmarks.loadgen.metrics import summarize
    from benchmarks.loadgen.results import RequestRecord
    from benchmarks.models import BenchmarkRun, RunStatus
    from benchmarks.prediction import compare_with_plan

    config = parse_config({"requests": 4, "input_tokens": 1200, "output_tokens": 64,
                           "concurrency": [1, 4]})  # fmt: skip
    levels = []
    for c in (1, 4):
        records = [
            RequestRecord(index=i, success=True, ttft_s=0.2 * c, latency_s=0.2 * c + 63 * 0.03,
                          itl_s=[0.03] * 63, prompt_tokens=1200, output_tokens=64,
                          asked_output_tokens=64)
            for i in range(4)
        ]  # fmt: skip
        summary = summarize(records, requests=4, duration_s=2.5 * c)
        levels.append({"concurrency": c, "request_rate_rps": None, "outcome": "completed",
                       "summary": summary.as_dict(), "errors": []})  # fmt: skip
    return BenchmarkRun.objects.create(
        target=target,
        target_name=target.name,
        plan=plan,
        created_by=user,
        status=RunStatus.SUCCEEDED,
        started_at=now - timedelta(minutes=2),
        finished_at=now,
        config=config.as_dict(),
        model_name="Qwen/Qwen2.5-32B-Instruct",
        prompts_exact=True,
        results={
            "outcome": "completed",
            "served_models": ["Qwen/Qwen2.5-32B-Instruct"],
            "levels": levels,
        },  # fmt: skip
        comparison=compare_with_plan(plan, config, levels, replicas=1),
    )
