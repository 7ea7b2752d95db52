"""PromQL for the series of a read-only target: what ServePlan would have derived from a poll,
computed by the Prometheus that already scrapes the server.

The metric names come from the scrape package's own tables (monitoring.scrape.vllm), old names
included: every family is read as `current or old`, so a panel never goes blank because a
server is older or newer (vllm:gpu_cache_usage_perc -> vllm:kv_cache_usage_perc,
vllm:time_per_output_token_seconds -> vllm:inter_token_latency_seconds, ...). Rates and
quantiles are over the rate window (at least four scrape intervals) instead of between two polls.
Only unlabelled series are offered; keys without an expression here have no data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from monitoring.scrape import vllm

from .promql import Matcher, vector

Build = Callable[[Sequence[Matcher], str], str]  # (selector matchers, rate window) -> PromQL


def names(current: str) -> list[str]:
    """A family's current name and the old names it replaced."""
    return [current, *(old for old, new in vllm.LEGACY_NAMES.items() if new == current)]


def _either(parts: Sequence[str]) -> str:
    return " or ".join(f"({p})" for p in parts) if len(parts) > 1 else parts[0]


def _gauge(family: str, how: str = "sum", scale: str = "") -> Build:
    return lambda sel, w: _either([f"{scale}{how}({vector(n, sel)})" for n in names(family)])


def _rate(family: str, sel: Sequence[Matcher], w: str, suffix: str = "_total") -> str:
    return _either([f"sum(rate({vector(n + suffix, sel)}[{w}]))" for n in names(family)])


def _counter_rate(family: str, key: str) -> Build:
    """The counter's rate, or the old gauge that stood in for it (vLLM V0)."""
    stand_in = {new: old for old, new in vllm.LEGACY_NAMES.items()}.get(key)

    def build(sel: Sequence[Matcher], w: str) -> str:
        parts = [_rate(family, sel, w)]
        if stand_in:
            parts.append(f"sum({vector(stand_in, sel)})")
        return _either(parts)

    return build


def _completion_ratio(sel: Sequence[Matcher], w: str) -> str:
    done = [*sel, Matcher("finished_reason", "=~", "stop|length")]
    return f"{_rate('vllm:request_success', done, w)} / {_rate('vllm:request_success', sel, w)}"


def _prefix_hit_ratio(sel: Sequence[Matcher], w: str) -> str:
    hits, queries = (
        _rate("vllm:prefix_cache_hits", sel, w),
        _rate("vllm:prefix_cache_queries", sel, w),
    )
    return _either(
        [f"({hits}) / ({queries})", f"avg({vector('vllm:gpu_prefix_cache_hit_rate', sel)})"]
    )


def _http_errors(sel: Sequence[Matcher], w: str) -> str:
    return _rate("http_requests", [*sel, Matcher("status", "!~", "2.*")], w)


def _quantile(family: str, q: float) -> Build:
    def build(sel: Sequence[Matcher], w: str) -> str:
        buckets = _either([f"rate({vector(n + '_bucket', sel)}[{w}])" for n in names(family)])
        return f"histogram_quantile({q}, sum by (le) ({buckets}))"

    return build


def _mean(family: str) -> Build:
    def build(sel: Sequence[Matcher], w: str) -> str:
        return _either(
            [
                f"sum(rate({vector(n + '_sum', sel)}[{w}]))"
                f" / sum(rate({vector(n + '_count', sel)}[{w}]))"
                for n in names(family)
            ]
        )

    return build


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
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
            table[f"{key}.{name}"] = _quantile(family, q)
        table[f"{key}.mean"] = _mean(family)
    return table


EXPRESSIONS: dict[str, Build] = _table()


def expression(key: str, selector: Sequence[Matcher], rate_window_ms: int) -> str | None:
    """Return the PromQL of `key` for the target `selector` names, or None when not offered."""
    build = EXPRESSIONS.get(key)
    return build(selector, f"{rate_window_ms}ms") if build else None
