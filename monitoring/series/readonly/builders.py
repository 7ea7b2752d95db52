"""PromQL for the series of a read-only target: what ServePlan would have derived from a poll,
computed by the Prometheus that already scrapes the server.

Each kind's table (a Promql: key -> builder, and the keys derived from an info family's labels)
is in readonly_kinds under its scrape registry name, written with the helpers below:
readonly_vllm, readonly_ray and readonly_gpu. A builder answers the key's series
with the labels the poller stores (`node`, `gpu`, `resource`, ...): exporter labels are renamed
with `relabel`, the others aggregated away. Rates and quantiles are over the rate window (at
least four scrape intervals) instead of between two polls. Keys without an expression have no
data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from monitoring.scrape.series import Sample
from monitoring.series.promql import Matcher, quote, vector

Build = Callable[[Sequence[Matcher], str], str]  # (selector matchers, rate window) -> PromQL


@dataclass(frozen=True, slots=True)
class FromLabels:
    """Keys whose values are an info family's label values (PromQL cannot turn a label into a
    value): the reader fetches the family's label sets and `derive` computes the samples."""

    family: str
    keys: tuple[str, ...]
    derive: Callable[[list[dict[str, str]]], list[Sample]]


@dataclass(frozen=True, slots=True)
class Facts:
    """What a poll keeps in the target's `info` from exporter labels (who uses a GPU, the host
    name): the families whose label sets are read, and `read` turning them into `info` entries."""

    families: tuple[str, ...]
    read: Callable[[list[dict[str, str]]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Promql:
    """How a kind's series are read from a Prometheus that scrapes it."""

    expressions: Mapping[str, Build] = field(default_factory=dict)
    from_labels: FromLabels | None = None
    # What the kind's poll keeps in the target's `info`, from the samples read (GPU readings).
    info: Callable[[list[Sample]], dict[str, Any]] | None = None
    facts: Facts | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        extra = self.from_labels.keys if self.from_labels else ()
        return (*self.expressions, *extra)


def either(parts: Sequence[str]) -> str:
    """`a or b or ...`: per label set, the first part that has it."""
    return " or ".join(f"({p})" for p in parts) if len(parts) > 1 else parts[0]


def relabel(expr: str, renames: Mapping[str, str]) -> str:
    """`expr` with each exporter label copied to our name (ours <- theirs)."""
    for ours, theirs in renames.items():
        if ours == theirs:
            continue
        expr = f'label_replace({expr}, {quote(ours)}, "$1", {quote(theirs)}, "(.*)")'
    return expr


def by(labels: Sequence[str]) -> str:
    return f" by ({', '.join(labels)}) " if labels else ""


def aggregate(inner: str, renames: Mapping[str, str] | None = None, how: str = "sum") -> str:
    """`how by (our labels) (inner)`, the exporter's labels renamed to ours first."""
    renames = renames or {}
    return f"{how}{by(list(renames))}({relabel(inner, renames)})"


def series(
    family: str, sel: Sequence[Matcher], renames: Mapping[str, str] | None = None, how: str = "sum"
) -> str:
    """A gauge family aggregated to our labels."""
    return aggregate(vector(family, sel), renames, how)


def counter_rate(
    families: Sequence[str],
    sel: Sequence[Matcher],
    window: str,
    renames: Mapping[str, str] | None = None,
) -> str:
    """The summed rate of a counter written under any of `families` (e.g. with `_total`)."""
    return either([aggregate(f"rate({vector(f, sel)}[{window}])", renames) for f in families])


def histogram(
    stat: float | None,
    families: Sequence[str],
    sel: Sequence[Matcher],
    window: str,
    renames: Mapping[str, str] | None = None,
) -> str:
    """A histogram's quantile `stat` (None: its mean) over the window, from any of `families`
    (named without `_bucket`, `_sum`, `_count`)."""
    renames = renames or {}
    if stat is None:
        return either(
            [
                f"{counter_rate([f + '_sum'], sel, window, renames)}"
                f" / {counter_rate([f + '_count'], sel, window, renames)}"
                for f in families
            ]
        )
    buckets = either(
        [relabel(f"rate({vector(f + '_bucket', sel)}[{window}])", renames) for f in families]
    )
    labels = "".join(", " + n for n in renames)
    return f"histogram_quantile({stat}, sum by (le{labels}) ({buckets}))"


# A histogram key's series: `<key>.p50` ... `<key>.mean` (monitoring.scrape.keys).
STATS: tuple[tuple[str, float | None], ...] = (
    ("p50", 0.5),
    ("p95", 0.95),
    ("p99", 0.99),
    ("mean", None),
)


def histogram_keys(
    key: str, families: Sequence[str], renames: Mapping[str, str] | None = None
) -> dict[str, Build]:
    """The builders of a histogram's quantile and mean keys."""

    def build(stat: float | None) -> Build:
        return lambda sel, w: histogram(stat, families, sel, w, renames)

    return {f"{key}.{name}": build(stat) for name, stat in STATS}
