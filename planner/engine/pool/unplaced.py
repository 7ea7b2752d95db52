"""Why a model of the pool could not be placed, and what would place it (each hint checked)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.engine.assumptions import Assumptions
from planner.engine.layouts import NodeGroup
from planner.engine.messages import Code, Message, message
from planner.engine.pool.options import Option, Rejection, model_options
from planner.engine.pool.result import PlacedModel
from planner.engine.pool.spec import PoolModel
from planner.engine.reasons import QUANT_LADDER

_SHORTER_CONTEXTS = (0.5, 0.25)


def _has_options(m: PoolModel, groups: list[NodeGroup], a: Assumptions, **change: Any) -> bool:
    options, _ = model_options(m.name, replace(m.spec, **change), groups, a)
    return bool(options)


def _memory_hints(m: PoolModel, groups: list[NodeGroup], a: Assumptions) -> list[Message]:
    """Return the changes that make the model fit the pool's GPUs: a dtype, a shorter context."""
    hints: list[Message] = []
    if not m.spec.pre_quantized:
        for dtype in QUANT_LADDER.get(m.spec.weight_dtype, ()):
            if _has_options(m, groups, a, weight_dtype=dtype):
                hints.append(message(Code.POOL_HINT_QUANTIZE, dtype=dtype))
                break
    for share in _SHORTER_CONTEXTS:
        length = max(1024, int(m.spec.max_model_len * share) // 1024 * 1024)
        if length < m.spec.max_model_len and _has_options(m, groups, a, max_model_len=length):
            hints.append(message(Code.POOL_HINT_CONTEXT, max_model_len=length))
            break
    return hints


def _no_room(
    m: PoolModel, own: list[Option], placed: list[PlacedModel], free: int
) -> tuple[Message, tuple[Message, ...]]:
    """The model has layouts, but the GPUs left after the others hold none of them."""
    smallest = min(own, key=lambda o: (o.shared, o.gpus, not o.slo_met))
    # Free GPUs spread over nodes can add up to enough and still hold no TP group of one node.
    short = smallest.gpus - free if smallest.gpus > free else smallest.tp
    hints = [message(Code.POOL_HINT_ADD_GPUS, gpus=short, gpu=smallest.gpu)]
    lower = sorted((p for p in placed if p.priority <= m.priority), key=lambda p: p.priority)
    if lower:
        hints.append(message(Code.POOL_HINT_YIELD, models=", ".join(p.name for p in lower[:3])))
    reason = message(
        Code.POOL_UNPLACED_ROOM,
        layout=f"TP{smallest.tp}×{smallest.replicas}",
        gpu=smallest.gpu,
        gpus=smallest.gpus,
        free=free,
    )
    return reason, tuple(hints)


def why_unplaced(
    m: PoolModel,
    groups: list[NodeGroup],
    *,
    own: list[Option],
    rejections: list[Rejection],
    placed: list[PlacedModel],
    free_gpus: int,
    a: Assumptions,
) -> tuple[Message, tuple[Message, ...]]:
    """Return the reason the model is unplaced and the hints that would place it."""
    if own:
        return _no_room(m, own, placed, free_gpus)
    if not rejections:
        return message(Code.POOL_NO_LAYOUT), ()
    largest = max(rejections, key=lambda r: (r.candidate.memory.visible_gib * r.tp, r.tp))
    why = largest.candidate.rejected_reason
    reason = message(
        Code.POOL_UNPLACED_MEMORY,
        gpu=largest.gpu,
        tp=largest.tp,
        reason=why if why is not None else message(Code.POOL_NO_LAYOUT),
    )
    return reason, tuple(_memory_hints(m, groups, a))
