"""What a vLLM target did over a window, as one typed value (plan vs reality, calibration)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from monitoring import stores
from monitoring.models import Target
from monitoring.series import Points, StoreUnavailable
from monitoring.series.percentiles import p95


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedConfig:
    """What the server says about itself (cache_config_info labels, /v1/models)."""

    models: tuple[str, ...]
    max_model_len: int | None
    kv_blocks: int | None  # num_gpu_blocks of one engine
    block_size_tokens: int | None
    cache_dtype: str
    gpu_memory_utilization: float | None
    tensor_parallel_size: int | None
    pipeline_parallel_size: int | None
    engines: int  # data-parallel engines behind this address (1 when not reported)
    # Read from Prometheus: /v1/models is not asked, so max_model_len is unknown, not absent.
    read_only: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetObservation:
    """Means and 95th percentiles of one target's series over a window."""

    target_id: int
    target_name: str
    polls: int
    concurrency: float | None  # mean running requests
    output_tok_s: float | None  # mean generated tokens per second
    ttft_p95_ms: float | None
    itl_p95_ms: float | None
    avg_input_tokens: float | None
    avg_output_tokens: float | None
    kv_capacity_tokens: float | None
    served: ServedConfig


def _float(value: Any) -> float | None:
    """Return a label's number, or None when it is not a finite one (labels are server text)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _int(value: Any) -> int | None:
    number = _float(value)
    return int(number) if number is not None and number >= 0 else None


def served_config(target: Target) -> ServedConfig:
    """Return the server's own facts from its last successful poll."""
    info = target.info or {}
    cache = info.get("cache_config") or {}
    served = info.get("served_models") or []
    names: list[str] = []
    for entry in served:
        names += [str(entry.get(k)) for k in ("id", "root") if entry.get(k)]
    names += [str(m) for m in info.get("models") or []]
    lengths = [_int(e.get("max_model_len")) for e in served]
    return ServedConfig(
        models=tuple(dict.fromkeys(names)),
        max_model_len=next((n for n in lengths if n), None),
        kv_blocks=_int(cache.get("num_gpu_blocks")),
        block_size_tokens=_int(cache.get("block_size")),
        cache_dtype=str(cache.get("cache_dtype") or ""),
        gpu_memory_utilization=_float(cache.get("gpu_memory_utilization")),
        tensor_parallel_size=_int(cache.get("tensor_parallel_size")),
        pipeline_parallel_size=_int(cache.get("pipeline_parallel_size")),
        engines=max(_int(info.get("engines")) or 1, 1),
        read_only=target.read_only,
    )


# The series `observe` reads, all in one window read.
RUNNING = "vllm.requests_running"
REQUESTS = "vllm.requests_per_s"
PROMPT_TOKENS = "vllm.prompt_tokens_per_s"
OUTPUT_TOKENS = "vllm.generation_tokens_per_s"
TTFT_P95 = "vllm.ttft_seconds.p95"
ITL_P95 = "vllm.inter_token_latency_seconds.p95"
OBSERVED_KEYS = (RUNNING, REQUESTS, PROMPT_TOKENS, OUTPUT_TOKENS, TTFT_P95, ITL_P95)


def _per_request(tokens: Points, requests: Points) -> float | None:
    """Return tokens per finished request: Σ token rate ÷ Σ request rate over common polls."""
    rates = dict(requests)
    common = [(t, v) for t, v in tokens if t in rates]
    finished = sum(rates[t] for t, _ in common)
    return sum(v for _, v in common) / finished if finished > 0 else None


def _mean(points: Points) -> float | None:
    return statistics.fmean(v for _, v in points) if points else None


def _p95_ms(points: Points) -> float | None:
    """Return the 95th percentile of per-poll values in seconds, in ms."""
    return p95([v for _, v in points]) * 1000.0 if points else None


def observe(target: Target, start: datetime, end: datetime) -> TargetObservation:
    """Return what `target` did between `start` and `end`."""
    try:
        series = stores.current().window(stores.ref(target), OBSERVED_KEYS, start, end)
    except StoreUnavailable:  # a read-only target's Prometheus: observed nothing, as unpolled
        series = {key: [] for key in OBSERVED_KEYS}
    return observation(target, series)


def observation(target: Target, series: Mapping[str, Points]) -> TargetObservation:
    """Return what `target` did, from its window's series (OBSERVED_KEYS at least)."""
    return TargetObservation(
        target_id=target.pk,
        target_name=target.name,
        polls=len(series[RUNNING]),
        concurrency=_mean(series[RUNNING]),
        output_tok_s=_mean(series[OUTPUT_TOKENS]),
        ttft_p95_ms=_p95_ms(series[TTFT_P95]),
        itl_p95_ms=_p95_ms(series[ITL_P95]),
        avg_input_tokens=_per_request(series[PROMPT_TOKENS], series[REQUESTS]),
        avg_output_tokens=_per_request(series[OUTPUT_TOKENS], series[REQUESTS]),
        kv_capacity_tokens=(target.latest or {}).get("vllm.kv_cache_capacity_tokens"),
        served=served_config(target),
    )
