"""Parse Prometheus text exposition with prometheus_client's parser, keeping only wanted families.

Large payloads (a Ray head exporter is hundreds of KB) are prefiltered line by line on the metric
name before the parser sees them, so the cost is dominated by the families we actually keep.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from .errors import ParseError
from .limits import current as current_limits

_SUFFIXES = ("_total", "_bucket", "_sum", "_count", "_created")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")


@dataclass(frozen=True, slots=True)
class PromSample:
    name: str
    labels: dict[str, str]
    value: float


@dataclass(frozen=True, slots=True)
class MetricFamily:
    """A family as declared by its `# TYPE` line; counters are named without `_total`."""

    name: str
    type: str
    samples: tuple[PromSample, ...]

    def values(self, suffix: str = "") -> Iterator[PromSample]:
        """Yield samples named `name + suffix` (`_total` for counters, `_bucket` for histograms)."""
        wanted = self.name + suffix
        for sample in self.samples:
            if sample.name == wanted:
                yield sample

    def counter_samples(self) -> Iterator[PromSample]:
        """Yield a counter's value samples whether it was exposed with `_total` or without."""
        if self.type == "counter":
            yield from self.values("_total")
        else:
            yield from (s for s in self.samples if not s.name.endswith("_created"))


def _wanted_names(wanted: Collection[str]) -> frozenset[str]:
    names: set[str] = set()
    for name in wanted:
        base = name[:-6] if name.endswith("_total") else name
        names.update((name, base, base + "_total"))
    return frozenset(names)


def _sample_name(line: str) -> str:
    end = len(line)
    for ch in ("{", " ", "\t"):
        pos = line.find(ch)
        if 0 <= pos < end:
            end = pos
    return line[:end]


def _keep_sample(name: str, keep: frozenset[str]) -> bool:
    """Return whether a sample belongs to a wanted family (never its `_created` timestamp)."""
    if name in keep:
        return True
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in keep:
            return suffix != "_created"
    return False


def lines_within_limits(text: str) -> Iterator[tuple[int, str]]:
    """Yield (line number, stripped line) of every non-blank line; LimitError past the poll's
    limits (line length, sample count), checked line by line before anything else is done."""
    limits = current_limits()
    samples = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        limits.check_line(number, line)
        if line[0] != "#":
            samples += 1
            limits.check_sample_count(samples)
        yield number, line


def prefilter(text: str, wanted: Collection[str] | None) -> str:
    """Return only the lines of the wanted families (HELP, TYPE and samples), minus `_created`.

    Every line is checked cheaply on the way: a payload that is not Prometheus text at all (an
    HTML login page, a JSON error) raises ParseError instead of yielding silently nothing, and a
    page over the poll's limits (samples, line length) raises LimitError before any parsing.
    Messages name line numbers, never the page's content (it may be any file of any server).
    """
    keep = _wanted_names(wanted) if wanted is not None else None
    out: list[str] = []
    for number, line in lines_within_limits(text):
        if line[0] == "#":
            parts = line.split(None, 3)
            if keep is None or (
                len(parts) >= 3 and parts[1] in ("HELP", "TYPE") and parts[2] in keep
            ):
                out.append(line)
            continue
        if line[0] not in _NAME_START and line[0] != "{":
            raise ParseError(f"line {number} is not a Prometheus sample")
        name = _sample_name(line)
        if len(name) == len(line):
            raise ParseError(f"line {number} is a sample without a value")
        if not name or keep is None or _keep_sample(name, keep):  # quoted names: parser decides
            out.append(line)
    return "\n".join(out) + "\n"


def parse(text: str, wanted: Collection[str] | None = None) -> dict[str, MetricFamily]:
    """Parse exposition text into families by name; raise ParseError on malformed text.

    With `wanted`, only those families are parsed (names with or without `_total`). Duplicate
    samples (same name and labels) keep the first; NaN and ±Inf values are kept as floats for
    the extractors to drop.
    """
    body = prefilter(text, wanted)
    limits = current_limits()
    families: dict[str, MetricFamily] = {}
    try:
        for metric in text_string_to_metric_families(body):
            if metric.type == "untyped" and metric.name.endswith("_created") and wanted is None:
                continue
            seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
            samples: list[PromSample] = []
            for s in metric.samples:
                ident = (s.name, tuple(sorted(s.labels.items())))
                if ident in seen:
                    continue
                seen.add(ident)
                limits.check_labels(s.name, s.labels)
                value = float(s.value)
                samples.append(PromSample(s.name, dict(s.labels), value))
            previous = families.get(metric.name)
            if previous is not None:
                # A family split in two blocks: merge, first sample wins.
                merged = {(p.name, tuple(sorted(p.labels.items()))): p for p in samples}
                merged.update(
                    {(p.name, tuple(sorted(p.labels.items()))): p for p in previous.samples}
                )
                samples = list(merged.values())
            families[metric.name] = MetricFamily(metric.name, metric.type, tuple(samples))
    except ParseError:
        raise
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        # The parser's message quotes the offending line: keep it out of what is stored.
        raise ParseError("malformed Prometheus text") from exc
    _adopt_openmetrics_totals(families)
    return families


def _adopt_openmetrics_totals(families: dict[str, MetricFamily]) -> None:
    """Attach `x_total` samples to a `# TYPE x counter` family (OpenMetrics-style naming).

    prometheus_client's text parser only accepts `x` samples under `# TYPE x counter`; the
    `x_total` ones come out as a separate untyped family.
    """
    for name, family in list(families.items()):
        orphan = families.get(name + "_total")
        if (
            family.type == "counter"
            and orphan is not None
            and orphan.type in ("untyped", "unknown")
        ):
            samples = (*family.samples, *orphan.samples)
            families[name] = MetricFamily(name, "counter", samples)
            del families[name + "_total"]
