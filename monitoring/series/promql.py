"""PromQL text that ServePlan sends: quoted label values, our stored series' selectors, and the
selectors of read-only targets (validated: a user's text never reaches a query unparsed)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import remote_write as rw
from .promql_regex import regex_error

_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\\n]|\\.)*)"\s*')
OPERATORS = ("=", "!=", "=~", "!~")
MAX_SELECTOR_CHARS = 500


class SelectorError(ValueError):
    """A read-only target's selector is not one ServePlan accepts (the message says why)."""


def quote(value: str) -> str:
    """Return `value` as a PromQL double-quoted string."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _unquote(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), body)


@dataclass(frozen=True, slots=True)
class Matcher:
    name: str
    op: str
    value: str

    def __post_init__(self) -> None:
        if not _NAME.match(self.name) or self.op not in OPERATORS:
            raise SelectorError(f"not a label matcher: {self.name}{self.op}")

    def __str__(self) -> str:
        return f"{self.name}{self.op}{quote(self.value)}"


def parse_selector(text: str) -> tuple[Matcher, ...]:
    """Parse a read-only target's selector, `{job="vllm",instance="10.0.0.5:8000"}`.

    Only label matchers (=, !=, =~, !~ with double-quoted values), no metric name, and at
    least one of `job` or `instance` matched exactly: the selector names one scrape target.
    """
    text = text.strip()
    if len(text) > MAX_SELECTOR_CHARS:
        raise SelectorError(f"longer than {MAX_SELECTOR_CHARS} characters")
    if not (text.startswith("{") and text.endswith("}")):
        raise SelectorError('write label matchers in braces, e.g. {job="vllm",instance="a:8000"}')
    body = text[1:-1].strip().rstrip(",")
    matchers: list[Matcher] = []
    pos = 0
    while pos < len(body):
        found = _MATCHER.match(body, pos)
        if found is None:
            raise SelectorError(f"cannot read a label matcher at {body[pos:][:30]!r}")
        name, op, raw = found.groups()
        if name == "__name__":
            raise SelectorError("a selector names no metric: ServePlan chooses the metrics")
        matchers.append(Matcher(name, op, _unquote(raw)))
        pos = found.end()
        if pos < len(body):
            if body[pos] != ",":
                raise SelectorError(f"expected ',' at {body[pos:][:30]!r}")
            pos += 1
    if not any(m.name in ("job", "instance") and m.op == "=" for m in matchers):
        raise SelectorError('match job or instance exactly, e.g. {job="vllm",instance="a:8000"}')
    return tuple(matchers)


def canonical_selector(text: str) -> str:
    """Return the selector as ServePlan stores it (parsed, its regexes checked, written back):
    a regex Prometheus would not compile is refused here, not at every read."""
    matchers = parse_selector(text)
    for m in matchers:
        why = regex_error(m.value) if m.op in ("=~", "!~") else None
        if why:
            raise SelectorError(f"{str(m)[:80]}: {why}")
    return "{" + ",".join(str(m) for m in matchers) + "}"


def vector(metric: str, matchers: Sequence[Matcher | str]) -> str:
    """Return `metric{matchers}`."""
    return f"{metric}{{{','.join(str(m) for m in matchers)}}}"


def _ids(target_ids: Sequence[int]) -> Matcher:
    ids = sorted(set(target_ids))
    if len(ids) == 1:
        return Matcher(rw.TARGET_LABEL, "=", str(ids[0]))
    return Matcher(rw.TARGET_LABEL, "=~", "|".join(str(i) for i in ids))


def stored(key: str, target_ids: Sequence[int], *, unlabelled: bool = False) -> str:
    """Return the selector of a key's series of the targets (ServePlan's own written series);
    `unlabelled`: only the series without labels of its own."""
    matchers: list[Matcher] = [Matcher("job", "=", rw.JOB), _ids(target_ids)]
    if unlabelled:
        matchers.append(Matcher(rw.LABELLED_LABEL, "=", ""))
    return vector(rw.metric_name(key), matchers)


def stored_all(target_id: int) -> str:
    """Return the selector of every series ServePlan wrote for one target."""
    return vector("", [Matcher("job", "=", rw.JOB), _ids([target_id])])
