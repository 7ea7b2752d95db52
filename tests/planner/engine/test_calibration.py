"""The memory model against real vLLM start-up logs (fixtures/vllm_startup_logs.json)."""

import dataclasses
import json
import math
from pathlib import Path

import pytest

from catalog.data import load_models
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.memory import kv_bytes_per_token, plan_memory

CASES = json.loads((Path(__file__).parent / "fixtures" / "vllm_startup_logs.json").read_text())[
    "cases"
]


def _predict(case):
    arch = load_models()[case["model_slug"]].architecture
    if case.get("config_overrides"):
        arch = dataclasses.replace(arch, **case["config_overrides"])
    return arch, plan_memory(
        arch,
        dtype=case["weight_dtype"],
        kv_cache_dtype="auto",
        tp=case["tp"],
        pp=case["pp"],
        visible_gib=case["visible_gib"],
        gpu_slug=case["gpu_slug"],
        utilization=case["gpu_memory_utilization"],
        max_model_len=case["max_model_len"],
        max_num_batched_tokens=case["max_num_batched_tokens"],
        max_num_seqs=None,
        a=dataclasses.replace(Assumptions(), **case.get("assumption_overrides", {})),
    )


def _reported_tokens(case, arch):
    rep = case["reported"]
    if "kv_tokens" in rep:
        return rep["kv_tokens"]
    per_token = kv_bytes_per_token(arch, case["tp"], arch.num_layers, "auto")
    return math.floor(rep["kv_cache_gib"] * GIB / per_token / 16) * 16


WEIGHT_CASES = [c for c in CASES if "weights_gib" in c["reported"]]


@pytest.mark.parametrize("case", WEIGHT_CASES, ids=lambda c: c["id"])
def test_weights_within_2_percent(case):
    _, mem = _predict(case)
    predicted = mem.worst.weights_bytes / GIB
    assert predicted == pytest.approx(case["reported"]["weights_gib"], rel=0.02)


@pytest.mark.parametrize("case", [c for c in CASES if c["kv_check"]], ids=lambda c: c["id"])
def test_kv_tokens_within_5_percent(case):
    arch, mem = _predict(case)
    assert mem.kv_tokens == pytest.approx(_reported_tokens(case, arch), rel=0.05)


def test_kv_bytes_to_tokens_matches_reported_conversion():
    case = next(c for c in CASES if c["id"] == "qwen3-235b-a22b-fp8-h100-tp4")
    arch = load_models()[case["model_slug"]].architecture
    per_token = kv_bytes_per_token(arch, 4, arch.num_layers, "auto")
    assert per_token == 2 * 94 * 1 * 128 * 2  # 4 KV heads over TP4: one per GPU
    tokens = math.floor(case["reported"]["kv_cache_gib"] * GIB / per_token / 16) * 16
    assert tokens == pytest.approx(case["reported"]["kv_tokens"], rel=0.02)


def test_every_case_names_its_source():
    assert len(CASES) >= 8
    assert all(c["source_url"].startswith("https://github.com/") for c in CASES)
    assert all(c["vllm_version"] for c in CASES)
