"""Sanity checks before any number is compared: is the server the one the plan describes?

A server of another model, context length or parallel layout makes every deviation meaningless;
these say so first. Codes are stable (scripts read them); messages are translated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from monitoring.reality.observation import TargetObservation
from planner.selectors.plan_values import PlanValues


class WarningCode(StrEnum):
    """The stable id of a comparison warning (scripts and the pages' data-code read it)."""

    MODEL_MISMATCH = "model_mismatch"
    MAX_MODEL_LEN_MISMATCH = "max_model_len_mismatch"
    MAX_MODEL_LEN_UNREAD = "max_model_len_unread"
    TP_MISMATCH = "tp_mismatch"
    PP_MISMATCH = "pp_mismatch"
    BLOCK_SIZE_MISMATCH = "block_size_mismatch"
    KV_DTYPE_MISMATCH = "kv_dtype_mismatch"
    GPU_MEMORY_UTILIZATION_MISMATCH = "gpu_memory_utilization_mismatch"
    DATA_PARALLEL_ENGINES = "data_parallel_engines"
    NO_DATA = "no_data"
    REPLICA_COUNT_MISMATCH = "replica_count_mismatch"


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonWarning:
    code: WarningCode
    message: str
    target: str = ""


def _normalise(name: str) -> str:
    """Return a model name without its path, organisation, case and punctuation."""
    tail = name.strip().rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^a-z0-9.]+", "", tail.lower())


def model_matches(served: tuple[str, ...], values: PlanValues) -> bool | None:
    """Return whether any served name is the plan's model (None: the server names none).

    A served name matches when it contains the plan's model name, repository tail or slug once
    paths, case and punctuation are dropped: "/models/Meta-Llama-3.1-70B-Instruct-quantized.w8a8"
    serves "Llama-3.1-70B-Instruct"; "Qwen/Qwen2.5-32B-Instruct" does not.
    """
    return names_match(served, (values.model_name, values.hf_repo, values.model_slug))


def names_match(served: tuple[str, ...], planned: tuple[str, ...]) -> bool | None:
    """Return whether any served name contains one of the `planned` names once paths, case and
    punctuation are dropped (None: the server names none)."""
    if not served:
        return None
    wanted = {_normalise(n) for n in planned if n}
    wanted.discard("")
    return any(w in _normalise(name) for name in served for w in wanted)


def _target_warnings(
    values: PlanValues, obs: TargetObservation, *, whole: bool
) -> list[ComparisonWarning]:
    return [
        *_model_warnings(values, obs),
        *_layout_warnings(values, obs),
        *_window_warnings(obs, whole=whole),
    ]


def _model_warnings(values: PlanValues, obs: TargetObservation) -> list[ComparisonWarning]:
    """The served model and its context length against the plan's."""
    served = obs.served
    name = obs.target_name
    out: list[ComparisonWarning] = []
    if model_matches(served.models, values) is False:
        out.append(
            ComparisonWarning(
                code=WarningCode.MODEL_MISMATCH,
                target=name,
                message=_("%(target)s serves %(served)s; the plan is for %(planned)s.")
                % {
                    "target": name,
                    "served": ", ".join(served.models),
                    "planned": values.model_name,
                },
            )
        )
    if served.max_model_len is not None and served.max_model_len != values.max_model_len:
        out.append(
            ComparisonWarning(
                code=WarningCode.MAX_MODEL_LEN_MISMATCH,
                target=name,
                message=_("%(target)s runs max_model_len %(served)d; the plan assumes %(planned)d.")
                % {"target": name, "served": served.max_model_len, "planned": values.max_model_len},
            )
        )
    if served.max_model_len is None and served.read_only:
        out.append(
            ComparisonWarning(
                code=WarningCode.MAX_MODEL_LEN_UNREAD,
                target=name,
                message=_(
                    "%(target)s is read from Prometheus, and no vLLM metric carries "
                    "max_model_len (only the server's /v1/models does): the plan's "
                    "%(planned)d tokens are not checked."
                )
                % {"target": name, "planned": values.max_model_len},
            )
        )
    return out


def _layout_warnings(values: PlanValues, obs: TargetObservation) -> list[ComparisonWarning]:
    """The served parallelism, KV blocks, KV dtype and memory share against the plan's."""
    served = obs.served
    name = obs.target_name
    out: list[ComparisonWarning] = []
    layout = values.replica.layout
    for code, label, seen, planned in (
        (WarningCode.TP_MISMATCH, "tensor_parallel_size", served.tensor_parallel_size, layout.tp),
        (
            WarningCode.PP_MISMATCH,
            "pipeline_parallel_size",
            served.pipeline_parallel_size,
            layout.pp,
        ),
    ):
        if seen is not None and seen != planned:
            out.append(
                ComparisonWarning(
                    code=code,
                    target=name,
                    message=_("%(target)s runs %(what)s %(served)d; the plan says %(planned)d.")
                    % {"target": name, "what": label, "served": seen, "planned": planned},
                )
            )
    if (
        served.block_size_tokens is not None
        and served.block_size_tokens != values.replica.block_size_tokens
    ):
        out.append(
            ComparisonWarning(
                code=WarningCode.BLOCK_SIZE_MISMATCH,
                target=name,
                message=_(
                    "%(target)s uses KV blocks of %(served)d tokens; the plan counts blocks of "
                    "%(planned)d, so block counts are not comparable."
                )
                % {
                    "target": name,
                    "served": served.block_size_tokens,
                    "planned": values.replica.block_size_tokens,
                },
            )
        )
    if served.cache_dtype and _kv_dtype(served.cache_dtype) != _kv_dtype(values.kv_cache_dtype):
        out.append(
            ComparisonWarning(
                code=WarningCode.KV_DTYPE_MISMATCH,
                target=name,
                message=_(
                    "%(target)s stores the KV cache as %(served)s; the plan assumes %(planned)s."
                )
                % {"target": name, "served": served.cache_dtype, "planned": values.kv_cache_dtype},
            )
        )
    utilization = served.gpu_memory_utilization
    if utilization is not None and abs(utilization - values.gpu_memory_utilization) > 0.005:
        out.append(
            ComparisonWarning(
                code=WarningCode.GPU_MEMORY_UTILIZATION_MISMATCH,
                target=name,
                message=_(
                    "%(target)s runs gpu_memory_utilization %(served)s; the plan assumes "
                    "%(planned)s."
                )
                % {
                    "target": name,
                    "served": f"{utilization:g}",
                    "planned": f"{values.gpu_memory_utilization:g}",
                },
            )
        )
    return out


def _window_warnings(obs: TargetObservation, *, whole: bool) -> list[ComparisonWarning]:
    """What the window cannot compare: data-parallel engines linked as one replica, no data."""
    served = obs.served
    name = obs.target_name
    out: list[ComparisonWarning] = []
    if not whole and served.engines > 1:
        out.append(
            ComparisonWarning(
                code=WarningCode.DATA_PARALLEL_ENGINES,
                target=name,
                message=_(
                    "%(target)s runs %(engines)d data-parallel engines, %(engines)d replicas "
                    "behind one address: link it as the whole plan, not as one replica."
                )
                % {"target": name, "engines": served.engines},
            )
        )
    if obs.polls == 0:
        out.append(
            ComparisonWarning(
                code=WarningCode.NO_DATA,
                target=name,
                message=_("%(target)s has no samples in this window.") % {"target": name},
            )
        )
    return out


def _kv_dtype(dtype: str) -> str:
    """Return 'fp8' for any 8-bit KV cache and '16-bit' for auto/bf16/fp16."""
    return "fp8" if dtype.lower().startswith("fp8") else "16-bit"


def sanity_warnings(
    values: PlanValues,
    observations: list[TargetObservation],
    *,
    whole: bool,
    replicas_found: int,
) -> list[ComparisonWarning]:
    """Return every mismatch between the plan and the linked servers."""
    out: list[ComparisonWarning] = []
    for obs in observations:
        out += _target_warnings(values, obs, whole=whole)
    engines = sum(o.served.engines for o in observations)
    if whole and engines > 1 and engines != values.replicas:
        out.append(
            ComparisonWarning(
                code=WarningCode.REPLICA_COUNT_MISMATCH,
                message=_(
                    "The linked endpoint runs %(found)d data-parallel engines; the plan plans "
                    "%(planned)d replicas."
                )
                % {"found": engines, "planned": values.replicas},
            )
        )
    if not whole and replicas_found != values.replicas:
        out.append(
            ComparisonWarning(
                code=WarningCode.REPLICA_COUNT_MISMATCH,
                message=ngettext(
                    "%(found)d target is linked as a replica of this plan; it plans %(planned)d.",
                    "%(found)d targets are linked as replicas of this plan; it plans %(planned)d.",
                    replicas_found,
                )
                % {"found": replicas_found, "planned": values.replicas},
            )
        )
    return out
