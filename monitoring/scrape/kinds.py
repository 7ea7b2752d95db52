"""The registry of target kinds: how each one is read, derived, polled, and which keys it stores.

A kind is one entry here; `run.from_text` and `run.scrape_once` look it up instead of branching
on names. The Django side (monitoring/targets/kinds.py) adds the kind's charts, tiles, template and
default alert rules on top of this entry, and monitoring.series.readonly.kinds its PromQL for a
read-only target: this package imports nothing of monitoring.series (which imports its label
model), so neither can be caught half-imported by the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from . import gpu, ray, ray_poll, vllm, vllm_poll
from .fetch import FetchPolicy
from .keys import for_kind
from .result import ScrapeResult
from .series import Extracted, RawSnapshot, Sample
from .series_spec import SeriesSpec

Reader = Callable[[str, float, str], Extracted]
Deriver = Callable[[RawSnapshot | None, RawSnapshot], list[Sample]]
# (source, previous raw snapshot, policy, token, clock, client, monotonic start) -> result
Poller = Callable[
    [
        str,
        RawSnapshot | Mapping[str, Any] | None,
        FetchPolicy,
        str | None,
        Callable[[], float],
        httpx.Client | None,
        float,
    ],
    ScrapeResult,
]
# (metrics URL, policy, token, client, result): more reads after a payload poll, into `result`.
AfterPayload = Callable[[str, FetchPolicy, str | None, httpx.Client | None, ScrapeResult], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrapeKind:
    """One kind of target.

    `read` extracts one saved payload (`instance` names its node where a kind has several);
    `derive` turns two raw snapshots into rates; `poll` is the live poll, or None for a target
    that is one `/metrics` payload at its base URL (then `after_payload` may read more, such as
    vLLM's /v1/models). `discovers_exporters`: the poll reports the exporters it asked (a
    cluster), stored with the target. `rates`: the kind derives rates from the previous poll's
    raw snapshot; a kind of gauges only (GPU exporters) keeps no snapshot, and its poll neither
    reads nor writes one.
    """

    name: str
    read: Reader
    derive: Deriver
    poll: Poller | None = None
    after_payload: AfterPayload | None = None
    discovers_exporters: bool = False
    rates: bool = True

    @property
    def keys(self) -> tuple[SeriesSpec, ...]:
        return for_kind(self.name)


def _read_vllm(text: str, ts: float, instance: str) -> Extracted:
    return vllm.extract(text, ts)


def _read_ray(text: str, ts: float, instance: str) -> Extracted:
    return ray.merge([ray.extract(text, ts, node=instance)], ts)


def _read_gpu(text: str, ts: float, instance: str) -> Extracted:
    return gpu.extract(text, ts, instance=instance)


REGISTRY: dict[str, ScrapeKind] = {
    kind.name: kind
    for kind in (
        ScrapeKind(
            name=vllm.KIND,
            read=_read_vllm,
            derive=vllm.derive,
            after_payload=vllm_poll.read_served_models,
        ),
        ScrapeKind(
            name=ray.KIND,
            read=_read_ray,
            derive=ray.derive,
            poll=ray_poll.scrape_cluster,
            discovers_exporters=True,
        ),
        ScrapeKind(
            name=gpu.KIND,
            read=_read_gpu,
            derive=gpu.derive,
            rates=False,
        ),
    )
}
KINDS: tuple[str, ...] = tuple(REGISTRY)


def get(name: str) -> ScrapeKind:
    """Return the kind called `name`; ValueError names the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {name!r}") from None
