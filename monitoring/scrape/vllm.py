"""Extract vLLM's /metrics into a raw snapshot and the samples to store.

Old and new metric names are mapped in one table (LEGACY_NAMES), so a panel never goes blank
because a server is older or newer. Engines (data parallel ranks) are summed; when a server
reports several model names, per-model series (label `model`) are added next to the totals.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .derive import comparable, histogram_delta, histogram_mean, quantiles, rate, ratio
from .parse import MetricFamily, PromSample, parse
from .series import (
    Extracted,
    Histogram,
    RawSnapshot,
    Sample,
    make_sample,
    merge_histograms,
    parse_series_id,
    series_id,
)

KIND = "vllm"

# Old name -> new name. A new name is a current vLLM family (a plain rename), or one of our
# series keys when an old gauge stands in for a series we otherwise derive from counters.
LEGACY_NAMES: dict[str, str] = {
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:gpu_prefix_cache_queries": "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits": "vllm:prefix_cache_hits",
    "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
    "vllm:avg_prompt_throughput_toks_per_s": "vllm.prompt_tokens_per_s",
    "vllm:avg_generation_throughput_toks_per_s": "vllm.generation_tokens_per_s",
    "vllm:gpu_prefix_cache_hit_rate": "vllm.prefix_cache_hit_ratio",
}

# Current family -> (our raw key, labels kept). Other labels (engine, handler, method) are summed.
GAUGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "vllm:num_requests_running": ("vllm.requests_running", ()),
    "vllm:num_requests_waiting": ("vllm.requests_waiting", ()),
    "vllm:num_requests_waiting_by_reason": ("vllm.requests_waiting_by_reason", ("reason",)),
    "vllm:kv_cache_usage_perc": ("vllm.kv_cache_usage_pct", ()),
}
COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "vllm:prompt_tokens": ("vllm.prompt_tokens", ()),
    "vllm:generation_tokens": ("vllm.generation_tokens", ()),
    "vllm:request_success": ("vllm.requests_finished", ("finished_reason",)),
    "vllm:num_preemptions": ("vllm.preemptions", ()),
    "vllm:prefix_cache_queries": ("vllm.prefix_cache_queries", ()),
    "vllm:prefix_cache_hits": ("vllm.prefix_cache_hits", ()),
    "http_requests": ("vllm.http_requests", ("status",)),
}
HISTOGRAMS: dict[str, str] = {
    "vllm:time_to_first_token_seconds": "vllm.ttft_seconds",
    "vllm:inter_token_latency_seconds": "vllm.inter_token_latency_seconds",
    "vllm:e2e_request_latency_seconds": "vllm.e2e_latency_seconds",
    "vllm:request_queue_time_seconds": "vllm.queue_time_seconds",
}
CACHE_CONFIG = "vllm:cache_config_info"
PROCESS_START = "process_start_time_seconds"
_PERCENT_KEYS = frozenset({"vllm.kv_cache_usage_pct"})
_COMPLETED_REASONS = frozenset({"stop", "length"})
_V0_RATE_GAUGES = {new: old for old, new in LEGACY_NAMES.items() if new.startswith("vllm.")}
# An old gauge is used only when the counter it stands in for is absent from the payload.
_STAND_IN_FOR = {
    "vllm.prompt_tokens_per_s": "vllm.prompt_tokens",
    "vllm.generation_tokens_per_s": "vllm.generation_tokens",
    "vllm.prefix_cache_hit_ratio": "vllm.prefix_cache_hits",
}

WANTED: frozenset[str] = frozenset(
    {*GAUGES, *COUNTERS, *HISTOGRAMS, *LEGACY_NAMES, CACHE_CONFIG, PROCESS_START}
)


def _canonical(families: dict[str, MetricFamily]) -> dict[str, MetricFamily]:
    """Return families under their current names; a current family wins over its old name."""
    out = dict(families)
    for old, new in LEGACY_NAMES.items():
        if old in families and not new.startswith("vllm.") and new not in families:
            out[new] = families[old]
    return out


def _model_groups(samples: Iterable[PromSample]) -> set[str]:
    return {s.labels.get("model_name", "") for s in samples}


def _group(
    samples: Iterable[PromSample], keep: tuple[str, ...], per_model: bool
) -> dict[tuple[tuple[str, str], ...], list[PromSample]]:
    """Group samples by the labels we keep, once for the target total and once per model."""
    groups: dict[tuple[tuple[str, str], ...], list[PromSample]] = defaultdict(list)
    for s in samples:
        kept = tuple((name, s.labels.get(name, "")) for name in keep)
        groups[kept].append(s)
        if per_model:
            groups[(("model", s.labels.get("model_name", "")), *kept)].append(s)
    return groups


def _finite_sum(samples: Iterable[PromSample], warnings: list[str], what: str) -> float | None:
    total = 0.0
    for s in samples:
        if not math.isfinite(s.value):
            warnings.append(f"{what}: non-finite value {s.value} ignored")
            return None
        total += s.value
    return total


def _histograms(family: MetricFamily) -> dict[tuple[tuple[str, str], ...], Histogram]:
    """Return one cumulative histogram per label set (minus `le`) of a histogram family."""
    buckets: dict[tuple[tuple[str, str], ...], dict[float, float]] = defaultdict(dict)
    counts: dict[tuple[tuple[str, str], ...], float] = {}
    sums: dict[tuple[tuple[str, str], ...], float] = {}
    for s in family.samples:
        if s.name.endswith("_bucket"):
            labels = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            try:
                le = float(s.labels.get("le", "nan"))
            except ValueError:
                continue
            buckets[labels][le] = s.value
        elif s.name.endswith("_count"):
            counts[tuple(sorted(s.labels.items()))] = s.value
        elif s.name.endswith("_sum"):
            sums[tuple(sorted(s.labels.items()))] = s.value
    out = {}
    for labels, by_le in buckets.items():
        if any(math.isnan(le) or math.isnan(c) for le, c in by_le.items()):
            continue
        count = counts.get(labels, by_le.get(math.inf, 0.0))
        out[labels] = Histogram(
            buckets=tuple(sorted(by_le.items())), count=count, sum=sums.get(labels, 0.0)
        )
    return out


def extract(text: str, ts: float) -> Extracted:
    """Parse a vLLM /metrics payload taken at unix time `ts`."""
    families = _canonical(parse(text, WANTED))
    warnings: list[str] = []
    models = set()
    for name in (*GAUGES, *COUNTERS, *HISTOGRAMS):
        if name in families and name != "http_requests":
            models |= _model_groups(families[name].samples)
    per_model = len(models - {""}) > 1

    gauges: list[Sample] = []
    for name, (key, keep) in GAUGES.items():
        family = families.get(name)
        if family is None:
            continue
        samples = [s for s in family.samples if not s.name.endswith("_created")]
        for labels, group in _group(samples, keep, per_model).items():
            value = _finite_sum(group, warnings, name)
            if value is None:
                continue
            if key in _PERCENT_KEYS:
                value = 100.0 * value / len(group)  # a mean fraction across engines, as %
            sample = make_sample(key, value, dict(labels))
            if sample is not None:
                gauges.append(sample)
    counters: dict[str, float] = {}
    for name, (key, keep) in COUNTERS.items():
        family = families.get(name)
        if family is None:
            continue
        # http_requests has no model label: it is the whole server's.
        groups = _group(family.counter_samples(), keep, per_model and name != "http_requests")
        for labels, group in groups.items():
            value = _finite_sum(group, warnings, name)
            if value is not None:
                counters[series_id(key, dict(labels))] = value

    for key, old in _V0_RATE_GAUGES.items():
        family = families.get(old)
        if family is None or _STAND_IN_FOR[key] in counters:
            continue  # the counters are there: the rate comes from them
        samples = list(family.samples)
        value = _finite_sum(samples, warnings, old)
        if value is not None and samples:
            if key.endswith("_ratio"):
                value /= len(samples)
            sample = make_sample(key, value)
            if sample is not None:
                gauges.append(sample)

    histograms: dict[str, Histogram] = {}
    for name, key in HISTOGRAMS.items():
        family = families.get(name)
        if family is None or family.type != "histogram":
            continue
        per_labels = _histograms(family)
        grouped: dict[tuple[tuple[str, str], ...], list[Histogram]] = defaultdict(list)
        for labels, hist in per_labels.items():
            grouped[()].append(hist)
            if per_model:
                grouped[(("model", dict(labels).get("model_name", "")),)].append(hist)
        for labels, parts in grouped.items():
            histograms[series_id(key, dict(labels))] = merge_histograms(parts)

    info: dict[str, Any] = {}
    epoch = None
    start = families.get(PROCESS_START)
    if start is not None:
        values = [s.value for s in start.samples if math.isfinite(s.value)]
        if values:
            epoch = repr(min(values))
    cache = families.get(CACHE_CONFIG)
    if cache is not None:
        gauges.extend(_cache_capacity(cache, info, warnings))
    if models - {""}:
        info["models"] = sorted(models - {""})
    raw = RawSnapshot(kind=KIND, ts=ts, epoch=epoch, counters=counters, histograms=histograms)
    return Extracted(gauges=gauges, raw=raw, info=info, warnings=warnings)


def _number(labels: dict[str, str], name: str) -> float | None:
    try:
        value = float(labels[name])
    except (KeyError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _cache_capacity(
    family: MetricFamily, info: dict[str, Any], warnings: list[str]
) -> list[Sample]:
    """Return the live KV capacity from `vllm:cache_config_info` labels, summed over engines."""
    engines = [s.labels for s in family.samples if not s.name.endswith("_created")]
    if not engines:
        return []
    info["cache_config"] = dict(engines[0])
    # With --data-parallel-size N one server runs N engines: N replicas behind one address.
    info["engines"] = len({e.get("engine", "") for e in engines})
    out = cache_capacity(engines)
    if not out:
        warnings.append("vllm:cache_config_info has no capacity labels")
    return out


def cache_capacity(engines: list[dict[str, str]]) -> list[Sample]:
    """Return the KV capacity samples from the label sets of `vllm:cache_config_info`, one per
    engine (summed over engines)."""
    if not engines:
        return []
    blocks = [_number(e, "num_gpu_blocks") for e in engines]
    block_size = _number(engines[0], "block_size")
    tokens = [_number(e, "kv_cache_size_tokens") for e in engines]
    concurrency = [_number(e, "kv_cache_max_concurrency") for e in engines]
    out: list[Sample | None] = []
    if all(b is not None for b in blocks):
        out.append(make_sample("vllm.kv_cache_blocks", sum(b for b in blocks if b is not None)))
    if block_size is not None:
        out.append(make_sample("vllm.kv_cache_block_size_tokens", block_size))
    if all(t is not None for t in tokens):
        out.append(make_sample("vllm.kv_cache_capacity_tokens", sum(t for t in tokens if t)))
    elif all(b is not None for b in blocks) and block_size is not None:
        total = sum(b for b in blocks if b is not None) * block_size
        out.append(make_sample("vllm.kv_cache_capacity_tokens", total))
    if all(c is not None for c in concurrency):
        out.append(make_sample("vllm.kv_cache_max_concurrency", sum(c for c in concurrency if c)))
    utilization = _number(engines[0], "gpu_memory_utilization")
    if utilization is not None:
        out.append(make_sample("vllm.gpu_memory_utilization_ratio", utilization))
    return [s for s in out if s is not None]


def derive(previous: RawSnapshot | None, current: RawSnapshot) -> list[Sample]:
    """Return rates, ratios and quantiles between two raw vLLM snapshots (empty on reset)."""
    elapsed = comparable(previous, current)
    if previous is None or elapsed is None:
        return []
    out: list[Sample | None] = []
    prev_c, cur_c = previous.counters, current.counters
    finished: dict[tuple[tuple[str, str], ...], dict[str, float]] = defaultdict(dict)
    http: dict[str, float] = {}
    for sid, value in cur_c.items():
        r = rate(prev_c.get(sid), value, elapsed)
        if r is None:
            continue
        key, labels = _split(sid)
        if key == "vllm.prompt_tokens":
            out.append(make_sample("vllm.prompt_tokens_per_s", r, labels))
        elif key == "vllm.generation_tokens":
            out.append(make_sample("vllm.generation_tokens_per_s", r, labels))
        elif key == "vllm.preemptions":
            out.append(make_sample("vllm.preemptions_per_s", r, labels))
        elif key == "vllm.requests_finished":
            reason = labels.pop("finished_reason", "")
            out.append(
                make_sample(
                    "vllm.requests_finished_per_s", r, {**labels, "finished_reason": reason}
                )
            )
            finished[tuple(sorted(labels.items()))][reason] = r
        elif key == "vllm.http_requests":
            status = labels.get("status", "")
            out.append(make_sample("vllm.http_requests_per_s", r, {"status": status}))
            http[status] = r
    for group, by_reason in finished.items():
        labels = dict(group)
        total = sum(by_reason.values())
        out.append(make_sample("vllm.requests_per_s", total, labels))
        done = sum(v for k, v in by_reason.items() if k in _COMPLETED_REASONS)
        completion = ratio(done, total)
        if completion is not None:
            out.append(make_sample("vllm.completion_ratio", completion, labels))
    if http:
        errors = sum(v for k, v in http.items() if not k.startswith("2"))
        out.append(make_sample("vllm.http_errors_per_s", errors))
    for sid, value in cur_c.items():
        key, labels = _split(sid)
        if key != "vllm.prefix_cache_hits":
            continue
        queries_id = series_id("vllm.prefix_cache_queries", labels)
        hits = rate(prev_c.get(sid), value, elapsed)
        queries = rate(prev_c.get(queries_id), cur_c.get(queries_id), elapsed)
        hit_ratio = ratio(hits, queries)
        if hit_ratio is not None:
            out.append(make_sample("vllm.prefix_cache_hit_ratio", min(hit_ratio, 1.0), labels))
    for sid, hist in current.histograms.items():
        delta = histogram_delta(previous.histograms.get(sid), hist)
        key, labels = _split(sid)
        for name, value in quantiles(delta).items():
            out.append(make_sample(f"{key}.{name}", value, labels))
        mean = histogram_mean(delta)
        if mean is not None:
            out.append(make_sample(f"{key}.mean", mean, labels))
    return [s for s in out if s is not None]


def _split(sid: str) -> tuple[str, dict[str, str]]:
    return parse_series_id(sid)
