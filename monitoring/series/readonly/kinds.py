"""Each kind's PromQL for read-only targets (monitoring.series.readonly), under the name of its
entry in the scrape registry (monitoring.scrape.kinds).

Kept here, not in that entry: the scrape package imports nothing of this one, which imports
the scrape package's label model (monitoring.scrape.series) for every series; either package,
or any module of theirs, can then be imported first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from monitoring.scrape import gpu, ray, vllm
from monitoring.series.promql import Matcher
from monitoring.series.readonly import gpu as gpu_promql
from monitoring.series.readonly import ray as ray_promql
from monitoring.series.readonly import vllm as vllm_promql
from monitoring.series.readonly.builders import Promql

REGISTRY: Mapping[str, Promql] = {
    vllm.KIND: vllm_promql.PROMQL,
    ray.KIND: ray_promql.PROMQL,
    gpu.KIND: gpu_promql.PROMQL,
}


def of_kind(kind: str) -> Promql:
    """The PromQL of a kind's series; ValueError names the known kinds."""
    try:
        return REGISTRY[kind]
    except KeyError:
        raise ValueError(f"kind must be one of {', '.join(REGISTRY)}, not {kind!r}") from None


def expression(kind: str, key: str, selector: Sequence[Matcher], rate_window_ms: int) -> str | None:
    """Return the PromQL of `key` for the target `selector` names, or None when not offered."""
    build = of_kind(kind).expressions.get(key)
    return build(selector, f"{rate_window_ms}ms") if build else None
