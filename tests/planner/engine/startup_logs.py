"""Real vLLM start-up logs (fixtures/vllm_startup_logs.json) and the engine's figures for them.

Used by test_calibration.py (the tolerances) and bench/bench_memory_accuracy.py (the MAE table).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from catalog.architecture import Architecture
from catalog.hf_config import from_hf_config
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.memory import MemoryResult, plan_memory

FIXTURES = Path(__file__).parent / "fixtures"


@cache
def configs() -> dict[str, dict[str, Any]]:
    """Return the config.json of every fixture model by name."""
    return json.loads((FIXTURES / "hf_configs.json").read_text())["configs"]


@cache
def cases() -> tuple[dict[str, Any], ...]:
    """Return every start-up log case."""
    return tuple(json.loads((FIXTURES / "vllm_startup_logs.json").read_text())["cases"])


def architecture(case: dict[str, Any]) -> Architecture:
    arch = from_hf_config(configs()[case["config"]])
    if case.get("config_overrides"):
        arch = dataclasses.replace(arch, **case["config_overrides"])
    return arch


def predict(case: dict[str, Any]) -> MemoryResult:
    """Return the engine's memory figures for the case's command line."""
    a = Assumptions()
    if "flashinfer_sampler" in case:
        a = dataclasses.replace(a, flashinfer_sampler=case["flashinfer_sampler"])
    return plan_memory(
        architecture(case),
        dtype=case["weight_dtype"],
        kv_cache_dtype=case["kv_cache_dtype"],
        tp=case["tp"],
        pp=case["pp"],
        visible_gib=case["visible_gib"],
        gpu_slug=case["gpu_slug"],
        utilization=case["gpu_memory_utilization"],
        max_model_len=case["max_model_len"],
        max_num_batched_tokens=case["max_num_batched_tokens"],
        max_num_seqs=case["max_num_seqs"],
        a=a,
        vllm_version=case["vllm_version"],
        custom_all_reduce=case["custom_all_reduce"],
    )


@dataclass(frozen=True, slots=True)
class CaseErrors:
    """Relative errors (predicted / reported − 1) of one case; None where the log lacks it."""

    case: dict[str, Any]
    weights: float | None
    kv_tokens: float | None
    max_concurrency: float | None


def _rel(predicted: float, reported: float | None) -> float | None:
    if reported is None or reported == 0:
        return None
    return predicted / reported - 1.0


def case_errors(case: dict[str, Any]) -> CaseErrors:
    mem = predict(case)
    rep = case["reported"]
    weights = max(s.weights_bytes for s in mem.stages) / GIB
    kv_ok = case["kv_check"]
    return CaseErrors(
        case=case,
        weights=_rel(weights, rep.get("weights_gib")),
        kv_tokens=_rel(mem.kv_tokens, rep.get("kv_tokens")) if kv_ok else None,
        max_concurrency=_rel(mem.max_concurrency, rep.get("max_concurrency")) if kv_ok else None,
    )
