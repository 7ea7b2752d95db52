"""Load the shipped catalog: model architectures (catalog/models/*.json) and GPU datasheets."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from catalog.architecture import Architecture
from catalog.hf_config import from_hf_config

_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelEntry:
    """One catalog model: identity, published figures and the parsed architecture."""

    slug: str
    name: str
    family: str
    hf_repo: str
    source: str
    published_total_params: int
    published_active_params: int | None
    # Some model cards leave the input embedding out of the active count (gpt-oss).
    published_active_excludes_embedding: bool
    architecture: Architecture
    config: dict[str, Any]


class GpuVendor(StrEnum):
    """Who makes the GPU: vLLM runs CUDA on NVIDIA, ROCm on AMD, XPU on Intel.

    The values are those of inventory's GpuType.vendor choices.
    """

    NVIDIA = "NVIDIA"
    AMD = "AMD"
    INTEL = "Intel"
    OTHER = "other"


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuEntry:
    """One GPU datasheet row (memory in GiB, bandwidth in GB/s, compute in TFLOPS)."""

    slug: str
    name: str
    vendor: GpuVendor
    memory_gib: float
    driver_visible_gib: float
    hbm_bandwidth_gbs: float
    bf16_dense_tflops: float
    fp8_support: bool
    nvlink_gbs: float
    form_factor: str
    source: str


@cache
def load_models() -> dict[str, ModelEntry]:
    """Return every catalog model keyed by slug."""
    models: dict[str, ModelEntry] = {}
    for path in sorted((_HERE / "models").glob("*.json")):
        doc = json.loads(path.read_text())
        active = doc.get("published_active_params")
        models[path.stem] = ModelEntry(
            slug=path.stem,
            name=doc["name"],
            family=doc["family"],
            hf_repo=doc["hf_repo"],
            source=doc["source"],
            published_total_params=int(doc["published_total_params"]),
            published_active_params=int(active) if active is not None else None,
            published_active_excludes_embedding=bool(
                doc.get("published_active_excludes_embedding", False)
            ),
            architecture=from_hf_config(doc["config"]),
            config=doc["config"],
        )
    return models


@cache
def load_gpus() -> dict[str, GpuEntry]:
    """Return every catalog GPU keyed by slug."""
    doc = json.loads((_HERE / "gpus.json").read_text())
    return {
        row["slug"]: GpuEntry(
            slug=row["slug"],
            name=row["name"],
            vendor=GpuVendor(row["vendor"]),
            memory_gib=float(row["memory_gib"]),
            driver_visible_gib=float(row["driver_visible_gib"]),
            hbm_bandwidth_gbs=float(row["hbm_bandwidth_gbs"]),
            bf16_dense_tflops=float(row["bf16_dense_tflops"]),
            fp8_support=bool(row["fp8_support"]),
            nvlink_gbs=float(row["nvlink_gbs"]),
            form_factor=row["form_factor"],
            source=row["source"],
        )
        for row in doc["gpus"]
    }
