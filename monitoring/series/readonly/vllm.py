"""PromQL of a read-only vLLM server's series (monitoring.series.readonly).

The metric names come from the scrape package's own tables (monitoring.scrape.vllm), old names
included: every family is read as `current or old`, so a panel never goes blank because a
server is older or newer (vllm:gpu_cache_usage_perc -> vllm:kv_cache_usage_perc,
vllm:time_per_output_token_seconds -> vllm:inter_token_latency_seconds, ...). The KV capacity
is in `vllm:cache_config_info`'s labels, which PromQL cannot turn into values:
monitoring.series.readonly.reader reads that family's label sets (CACHE_CAPACITY) and derives it as
a poll does.

What a poll keeps in `info` from the server's labels (FACTS) is read the same way: the cache
config and its engines from `vllm:cache_config_info`, the served model names from the
`model_name` label of every vllm: family. `/v1/models` is not read (ServePlan asks the server
nothing): max_model_len is in no metric, and plan vs reality says it is not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from monitoring.scrape import vllm
from monitoring.series.promql import Matcher, vector
from monitoring.series.readonly.builders import (
    Build,
    Facts,
    FromLabels,
    Promql,
    counter_rate,
    either,
    histogram_keys,
    series,
)

CACHE_CAPACITY = FromLabels(
    family=vllm.CACHE_CONFIG,
    keys=(
        "vllm.kv_cache_blocks",
        "vllm.kv_cache_block_size_tokens",
        "vllm.kv_cache_capacity_tokens",
        "vllm.kv_cache_max_concurrency",
        "vllm.gpu_memory_utilization_ratio",
    ),
    derive=vllm.cache_capacity,
)


def names(current: str) -> list[str]:
    """A family's current name and the old names it replaced."""
    return [current, *(old for old, new in vllm.LEGACY_NAMES.items() if new == current)]


def _gauge(family: str, how: str = "sum", scale: str = "") -> Build:
    return lambda sel, w: either([f"{scale}{series(n, sel, None, how)}" for n in names(family)])


def _rate(family: str, sel: Sequence[Matcher], w: str) -> str:
    return counter_rate([n + "_total" for n in names(family)], sel, w)


def _counter_rate(family: str, key: str) -> Build:
    """The counter's rate, or the old gauge that stood in for it (vLLM V0)."""
    stand_in = {new: old for old, new in vllm.LEGACY_NAMES.items()}.get(key)

    def build(sel: Sequence[Matcher], w: str) -> str:
        parts = [_rate(family, sel, w)]
        if stand_in:
            parts.append(f"sum({vector(stand_in, sel)})")
        return either(parts)

    return build


def _completion_ratio(sel: Sequence[Matcher], w: str) -> str:
    done = [*sel, Matcher("finished_reason", "=~", "stop|length")]
    return f"{_rate('vllm:request_success', done, w)} / {_rate('vllm:request_success', sel, w)}"


def _prefix_hit_ratio(sel: Sequence[Matcher], w: str) -> str:
    hits, queries = (
        _rate("vllm:prefix_cache_hits", sel, w),
        _rate("vllm:prefix_cache_queries", sel, w),
    )
    return either(
        [f"({hits}) / ({queries})", f"avg({vector('vllm:gpu_prefix_cache_hit_rate', sel)})"]
    )


def _http_errors(sel: Sequence[Matcher], w: str) -> str:
    return _rate("http_requests", [*sel, Matcher("status", "!~", "2.*")], w)


def _table() -> dict[str, Build]:
    table: dict[str, Build] = {
        "poll.up": _gauge("up", "max"),
        "scrape.duration_seconds": _gauge("scrape_duration_seconds", "max"),
        "vllm.requests_running": _gauge("vllm:num_requests_running"),
        "vllm.requests_waiting": _gauge("vllm:num_requests_waiting"),
        "vllm.kv_cache_usage_pct": _gauge("vllm:kv_cache_usage_perc", "avg", "100 * "),
        "vllm.prompt_tokens_per_s": _counter_rate("vllm:prompt_tokens", "vllm.prompt_tokens_per_s"),
        "vllm.generation_tokens_per_s": _counter_rate(
            "vllm:generation_tokens", "vllm.generation_tokens_per_s"
        ),
        "vllm.preemptions_per_s": _counter_rate("vllm:num_preemptions", ""),
        "vllm.requests_per_s": _counter_rate("vllm:request_success", ""),
        "vllm.completion_ratio": _completion_ratio,
        "vllm.prefix_cache_hit_ratio": _prefix_hit_ratio,
        "vllm.http_errors_per_s": _http_errors,
    }
    for family, key in vllm.HISTOGRAMS.items():
        table.update(histogram_keys(key, names(family)))
    return table


# Labels Prometheus adds to every series (the poller's page has none of them).
SCRAPE_LABELS = frozenset({"__name__", "job", "instance"})
# A family every vLLM version exports, once per engine and model: its label sets name the models.
MODEL_FAMILY = "vllm:num_requests_running"


def facts(label_sets: list[dict[str, str]]) -> dict[str, Any]:
    """The `info` a poll keeps from the page's labels (monitoring.scrape.vllm.extract): the
    first engine's cache config, the engines (data-parallel ranks of every instance the
    selector names) and the served model names."""
    configs = sorted(
        (labels for labels in label_sets if labels.get("__name__") == vllm.CACHE_CONFIG),
        key=lambda labels: (labels.get("instance", ""), labels.get("engine", "")),
    )
    models = {
        labels.get("model_name", "")
        for labels in label_sets
        if labels.get("__name__") != vllm.CACHE_CONFIG
    } - {""}
    out: dict[str, Any] = {}
    if configs:
        out["cache_config"] = {k: v for k, v in configs[0].items() if k not in SCRAPE_LABELS}
        out["engines"] = len({(c.get("instance", ""), c.get("engine", "")) for c in configs})
    if models:
        out["models"] = sorted(models)
    return out


FACTS = Facts((vllm.CACHE_CONFIG, MODEL_FAMILY), facts)

PROMQL = Promql(_table(), CACHE_CAPACITY, facts=FACTS)
