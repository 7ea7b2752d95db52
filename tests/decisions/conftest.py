"""Plans for the decision tests: real engine runs of S1/S3, and fixed result dicts for goldens."""

import copy
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from planner.decisions import services
from planner.models import Plan

FIXED_TIME = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


def _nodes(hosts: tuple[str, ...], gpu: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "hostname": h,
            "gpu": gpu,
            "gpu_count": count,
            "intra_link": "nvlink",
            "nics": [{"name": "eth1", "speed_gbps": 25, "kind": "ethernet", "role": "data"}],
        }
        for h in hosts
    ]


# DOMAIN.md S1 (seed 000): 2 × 8 × A800 80G, NVLink, 25 GbE; 70B dense INT8.
S1_ENGINE_SPEC = {
    "model": "llama-3.1-70b",
    "weight_dtype": "int8",
    "max_model_len": 8192,
    "workload": {"concurrency": 32, "avg_input_tokens": 1024, "avg_output_tokens": 256},
    "hardware": {
        "pool_kind": "dedicated",
        "nodes": _nodes(("a800-01", "a800-02"), "a800-80g-sxm", 8),
    },
}


def s3_engine_spec(pool_kind: str) -> dict[str, Any]:
    """DOMAIN.md S3 (seed 001): 2 × 4 GPUs, one replica TP4 × PP2."""
    return {
        "model": "qwen2.5-72b",
        "weight_dtype": "bf16",
        "max_model_len": 65536,
        "rope_scaling_factor": 4.0,
        "workload": {"concurrency": 16, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "pinned_layout": {"tp": 4, "pp": 2, "replicas": 1},
        "hardware": {
            "pool_kind": pool_kind,
            "nodes": _nodes(("a100-01", "a100-02"), "a100-80g-sxm", 4),
        },
    }


def plan_from_result(
    result: dict[str, Any],
    *,
    author: Any,
    spec: dict[str, Any],
    pool_kind: str,
    title: str,
    public_id: uuid.UUID | None = None,
    created_at: datetime | None = None,
) -> Plan:
    """Save a Plan snapshot the way the planner does, from an engine result dict."""
    rec = result.get("recommendation", {})
    plan = Plan(
        title=title,
        author=author,
        spec=spec,
        engine_input=spec,
        result=result,
        engine_version="test",
        model_slug=result.get("model", {}).get("slug", ""),
        model_name=result.get("model", {}).get("name", "model"),
        route=rec.get("route", "A"),
        tp=rec.get("tp", 1),
        pp=rec.get("pp", 1),
        replicas=rec.get("replicas", 1),
        executor_backend=rec.get("executor_backend", "mp"),
        balancer=rec.get("balancer", ""),
        pool_kind=pool_kind,
        hostnames=result.get("node_selection", {}).get("hosts", []),
    )
    if public_id is not None:
        plan.public_id = public_id
    if created_at is not None:
        plan.created_at = created_at
    plan.save()
    return plan


def engine_result(spec: dict[str, Any]) -> dict[str, Any]:
    from planner.engine.plan import plan
    from planner.engine.spec import spec_from_dict

    return plan(spec_from_dict(spec)).to_dict()


def _reason(rid: str, rule: str, text: str) -> dict[str, Any]:
    return {"id": rid, "rule": rule, "params": {}, "text": text}


def _candidate(cid: str, tp: int, pp: int, replicas: int, **extra: Any) -> dict[str, Any]:
    base = {
        "id": cid,
        "tp": tp,
        "pp": pp,
        "replicas": replicas,
        "nodes_per_replica": 1,
        "gpus_per_replica": tp * pp,
        "kind": "intra-node",
        "fits": True,
        "serves_load": True,
        "rejected_reason": "",
        "score": 90.0,
        "output_throughput_tok_s": 2000.0,
        "ttft_ms": 136.0,
        "itl_ms": 7.8,
    }
    base.update(extra)
    return base


# Fixed, hand-written results in the engine's shape: the golden files must not move when the
# engine's arithmetic is refined.
S1_STATIC_RESULT: dict[str, Any] = {
    "recommendation": {
        "route": "A",
        "tp": 8,
        "pp": 1,
        "replicas": 2,
        "nodes_per_replica": 1,
        "weight_dtype": "int8",
        "executor_backend": "mp",
        "balancer": "nginx",
        "candidate_id": "a800:tp8-pp1-r2:int8",
        "summary": "Route A: serve Llama-3.1-70B-Instruct with int8 weights as TP8×PP1 × 2 "
        "replica(s) on a800-80g-sxm (a800-01, a800-02).",
        "reasons": [
            _reason(
                "fits_one_node",
                "§3 (000 §5.5)",
                "The model fits one node at TP8 (8.2 GiB weights per GPU).",
            ),
            _reason(
                "cross_node_worse",
                "§2, §3 (000 §2.2, 002 §5)",
                "TP16 across nodes is ranked below: 60 ms of all-reduce per decode step.",
            ),
        ],
    },
    "candidates": [
        _candidate("a800:tp8-pp1-r2:int8", 8, 1, 2),
        _candidate("a800:tp4-pp1-r4:int8", 4, 1, 4, score=80.0, output_throughput_tok_s=1800.0),
        _candidate(
            "a800:tp16-pp1-r1:int8",
            16,
            1,
            1,
            kind="cross-node-tp",
            nodes_per_replica=2,
            score=20.0,
            output_throughput_tok_s=600.0,
        ),
    ],
    "signals": [
        {"id": "sig_multi_model_pool", "direction": "for_ray", "hit": False, "text": "x"},
        {"id": "sig_steady_traffic", "direction": "against_ray", "hit": True, "text": "steady"},
    ],
    "placement": {
        "required": False,
        "strategy": "PACK",
        "bundles": [{"resources": {"GPU": 8, "CPU": 16}, "fits": True, "node": "a800-01"}],
        "placeable": True,
        "single_bundle": {"resources": {"GPU": 8}, "placeable": True, "reason": ""},
        "alternative": None,
    },
    "pitfalls": [
        {
            "id": "pit_nccl_socket_ifname",
            "severity": "medium",
            "text": "NCCL may pick the wrong NIC.",
            "action": "Set NCCL_SOCKET_IFNAME=eth1.",
        },
        {"id": "pit_nccl_debug", "severity": "info", "text": "Debug NCCL.", "action": ""},
    ],
    "configs": {},
    "model": {"name": "Llama-3.1-70B-Instruct", "slug": "llama-3.1-70b"},
    "node_selection": {"hosts": ["a800-01", "a800-02"]},
}

S3_STATIC_RESULT: dict[str, Any] = {
    "recommendation": {
        "route": "B",
        "tp": 4,
        "pp": 2,
        "replicas": 1,
        "nodes_per_replica": 2,
        "weight_dtype": "bf16",
        "executor_backend": "ray",
        "balancer": "none",
        "candidate_id": "a100:tp4-pp2-r1:bf16",
        "summary": "Route B: serve Qwen2.5-72B-Instruct as TP4×PP2 × 1 replica(s).",
        "reasons": [
            _reason(
                "pp_over_cross_tp",
                "§1, §3 Route B (000 §2)",
                "TP4×PP2 is preferred to TP8 across nodes.",
            )
        ],
    },
    "candidates": [
        _candidate(
            "a100:tp4-pp2-r1:bf16",
            4,
            2,
            1,
            kind="cross-node-pp",
            nodes_per_replica=2,
            ttft_ms=254.0,
            itl_ms=27.0,
        ),
        _candidate(
            "a100:tp8-pp1-r1:bf16",
            8,
            1,
            1,
            kind="cross-node-tp",
            nodes_per_replica=2,
            score=30.0,
            output_throughput_tok_s=150.0,
        ),
    ],
    "signals": [],
    "placement": {
        "required": True,
        "gpus_per_replica": 8,
        "strategy": "STRICT_SPREAD",
        "bundles": [
            {"resources": {"GPU": 4, "CPU": 8}, "fits": True, "node": "a100-01"},
            {"resources": {"GPU": 4, "CPU": 8}, "fits": True, "node": "a100-02"},
        ],
        "placeable": True,
        "single_bundle": {
            "resources": {"GPU": 8},
            "placeable": False,
            "reason": "a bundle must fit on one node; the largest node has 4 free GPUs",
        },
        "alternative": {"bundles": [{"GPU": 4}, {"GPU": 4}], "strategy": "STRICT_SPREAD"},
    },
    "pitfalls": [],
    "configs": {},
    "model": {"name": "Qwen2.5-72B-Instruct", "slug": "qwen2.5-72b"},
    "node_selection": {"hosts": ["a100-01", "a100-02"]},
}


@pytest.fixture
def s1_static_plan(planner):
    return plan_from_result(
        copy.deepcopy(S1_STATIC_RESULT),
        author=planner,
        spec={"scenario": "S1"},
        pool_kind="dedicated",
        title="S1 70B INT8 on two A800 nodes",
        public_id=uuid.UUID("11111111-1111-4111-8111-111111111111"),
        created_at=FIXED_TIME,
    )


@pytest.fixture
def s3_static_plan(planner):
    return plan_from_result(
        copy.deepcopy(S3_STATIC_RESULT),
        author=planner,
        spec={"scenario": "S3"},
        pool_kind="shared",
        title="S3 72B TP4×PP2 in the shared pool",
        public_id=uuid.UUID("33333333-3333-4333-8333-333333333333"),
        created_at=FIXED_TIME,
    )


@pytest.fixture
def s1_engine_plan(planner):
    return plan_from_result(
        engine_result(S1_ENGINE_SPEC),
        author=planner,
        spec=S1_ENGINE_SPEC,
        pool_kind="dedicated",
        title="S1 through the engine",
    )


@pytest.fixture
def s3_shared_engine_plan(planner):
    spec = s3_engine_spec("shared")
    return plan_from_result(
        engine_result(spec), author=planner, spec=spec, pool_kind="shared", title="S3 shared"
    )


@pytest.fixture
def s3_dedicated_engine_plan(planner):
    spec = s3_engine_spec("dedicated")
    return plan_from_result(
        engine_result(spec), author=planner, spec=spec, pool_kind="dedicated", title="S3 dedicated"
    )


THRESHOLDS = {
    "start_to_serving": 180.0,
    "ttft_p95": 800.0,
    "itl_p95": 60.0,
    "completion_rate": 99.5,
    "drill_recovery": 120.0,
    "drill_in_flight": 5.0,
}
PASSING = {
    "start_to_serving": 95.0,
    "ttft_p95": 310.0,
    "itl_p95": 21.0,
    "completion_rate": 99.9,
    "drill_recovery": 48.0,
    "drill_in_flight": 0.0,
}
OWNED = {
    "allocation": {"owner": "Existing platform", "mechanism": "Reserves both nodes."},
    "workers": {"owner": "Existing platform", "mechanism": "One vllm serve per node, mp."},
    "ray_benefit": {"owner": "pat-planner", "mechanism": "No Ray migration."},
    "recovery": {"owner": "SRE on call", "mechanism": "systemd restarts; nginx drains."},
    "proof": {"owner": "pat-planner", "mechanism": "The evidence table."},
}


def make_decision(user: Any, **fields: Any):
    """Create a bare proposed record through the service."""
    fields.setdefault("title", "Keep mp on the dedicated nodes")
    return services.decision_create(actor=user, **fields)


def complete_decision(user: Any, *, measured: dict[str, float] | None = None, **fields: Any):
    """Create a record that is complete (owners, sentence, thresholds), optionally measured."""
    evidence = {k: {"threshold": v} for k, v in THRESHOLDS.items()}
    for kind, value in (measured or {}).items():
        evidence[kind]["measured_value"] = value
    fields.setdefault("verifiable_sentence", "Keep mp, because the platform reserves both nodes.")
    return make_decision(user, responsibilities=copy.deepcopy(OWNED), evidence=evidence, **fields)


def form_data(response: Any) -> dict[str, Any]:
    """Return the POST data a browser would send for the form on `response`, unchanged."""
    form = response.context["form"]
    data: dict[str, Any] = {}
    for name in form.fields:
        value = form[name].value()
        if value is None:
            continue
        if isinstance(value, list | tuple):
            data[name] = [getattr(v, "pk", v) for v in value]
        else:
            data[name] = value
    return data
