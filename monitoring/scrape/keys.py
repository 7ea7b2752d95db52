"""The one table of series keys we store. Keys are stable: dashboards, alerts and the API use them.

A stored series is (key, labels); its canonical string is `key{label="value",...}` with labels
sorted (see series.series_id). Units are in the key's last word (`_pct`, `_bytes`, `_mib`,
`_per_s`, `_seconds`, `_ms`, `_ratio`, `_tokens`); quantile keys end in `.p50`, `.p95`, `.p99`,
`.mean` after the histogram's key. vLLM series carry no label unless listed; when one server
reports several model names, vLLM series are also stored per model with the label `model`.
"""

from __future__ import annotations

from monitoring.scrape.keys_gpu import GPU_SERIES
from monitoring.scrape.keys_ray import RAY_SERIES
from monitoring.scrape.keys_vllm import VLLM_SERIES
from monitoring.scrape.series_spec import SeriesSpec

# The table, by source: every target's and vLLM's, Ray's, the GPU exporters'.
SERIES: tuple[SeriesSpec, ...] = (*VLLM_SERIES, *RAY_SERIES, *GPU_SERIES)

BY_KEY: dict[str, SeriesSpec] = {spec.key: spec for spec in SERIES}
# Labelled series copied into Target.latest next to every unlabelled one.
LATEST_LABELLED: frozenset[str] = frozenset(s.key for s in SERIES if s.latest)


def for_kind(kind: str) -> tuple[SeriesSpec, ...]:
    """Return the keys a target of `kind` stores: its own and the ones every kind stores."""
    return tuple(s for s in SERIES if s.target_kind in ("", kind))


def markdown_table() -> str:
    """Return the key table as Markdown (for docs)."""
    lines = ["| key | kind | labels | from | meaning |", "|---|---|---|---|---|"]
    for s in SERIES:
        labels = ", ".join(s.labels) or "-"
        lines.append(f"| `{s.key}` | {s.kind} | {labels} | {s.source} | {s.description} |")
    return "\n".join(lines)
