"""Fill a decision record's evidence from what a target measured over a time window.

Writes go through the planner's `record_evidence_measurement` (source "monitoring", with the
window), the one entry point the decisions app offers for this. A value someone typed by hand is
never replaced without their say: it is held back and the caller asks first.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from monitoring import stores
from monitoring.models import Target, TargetKind
from monitoring.reality.observation import ITL_P95, REQUESTS, TTFT_P95, served_config
from monitoring.reality.server_checks import model_matches, names_match
from monitoring.series.percentiles import p95
from planner.decisions.models import EvidenceSource
from planner.decisions.selectors import evidence_items
from planner.decisions.services import record_evidence_measurement
from planner.selectors.plan_values import PlanUnreadable, plan_values

COMPLETION_RATIO = "vllm.completion_ratio"
GPUS = "gpu.machine.gpus"
GPU_UTILIZATION = "gpu.machine.utilization_pct"


@dataclass(frozen=True, slots=True)
class Measured:
    kind: str  # the decision's evidence kind
    value: float
    unit: str
    note: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HeldBack:
    """A measurement not written because the item holds a value typed by hand."""

    kind: str
    label: str
    typed_value: float
    typed_unit: str
    measured: Measured


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceFill:
    filled: tuple[Measured, ...]
    held: tuple[HeldBack, ...]
    # Why nothing was written: the server serves another model than the record is about.
    refused: str = ""


def model_mismatch(target: Target) -> str:
    """Return why `target`'s numbers are no evidence for its decision record ("" when they
    are): the server names its models, and none is the record's model (the plan's when the
    record comes from a plan)."""
    decision = target.decision
    if decision is None:
        return ""
    served = served_config(target).models
    if decision.plan_id is not None:
        try:
            values = plan_values(decision.plan)
        except PlanUnreadable:
            return ""
        planned = values.model_name
        matches = model_matches(served, values)
    else:
        planned = decision.model_name
        if not planned:
            return ""
        matches = names_match(served, (planned,))
    if matches is not False:
        return ""
    return _("%(target)s serves %(served)s; the decision is about %(planned)s.") % {
        "target": target.name,
        "served": ", ".join(served),
        "planned": planned,
    }


def round_measurement(value: float, unit: str) -> float:
    """Round to what the measurement can support: 3 significant figures, 0.01 for percentages.

    Per-poll p95s carry histogram-bucket interpolation error far above a microsecond; 434.375 ms
    is stored as 434 ms.
    """
    if unit == "%":
        return round(value, 2)
    if value == 0 or not math.isfinite(value):
        return value
    digits = 3 - int(math.floor(math.log10(abs(value)))) - 1
    return round(value, max(digits, 0)) if digits > 0 else float(round(value, digits))


def _window_text(start: datetime, end: datetime) -> str:
    return f"{start:%Y-%m-%d %H:%M:%S}–{end:%Y-%m-%d %H:%M:%S} UTC"


def measure_window(target: Target, start: datetime, end: datetime) -> list[Measured]:
    """Return TTFT p95, inter-token p95 (ms) and completion rate (%) over the window, rounded."""
    out: list[Measured] = []
    where = f"target {target.name} (id {target.pk}), window {_window_text(start, end)}"
    keys = (TTFT_P95, ITL_P95, COMPLETION_RATIO, REQUESTS)
    series = stores.current().window(stores.ref(target), keys, start, end)
    for kind, key in (("ttft_p95", TTFT_P95), ("itl_p95", ITL_P95)):
        values = [v for _, v in series[key]]
        if values:
            out.append(
                Measured(
                    kind,
                    round_measurement(p95(values) * 1000.0, "ms"),
                    "ms",
                    f"ServePlan monitoring, {where}: 95th percentile of {len(values)} "
                    f"per-poll p95 values of {key}",
                )
            )
    ratios = dict(series[COMPLETION_RATIO])
    weights: dict[Any, float] = defaultdict(float)
    weights.update(dict(series[REQUESTS]))
    total = sum(weights[t] for t in ratios)
    if ratios and total > 0:
        rate = sum(ratios[t] * weights[t] for t in ratios) / total
        out.append(
            Measured(
                "completion_rate",
                round_measurement(rate * 100.0, "%"),
                "%",
                f"ServePlan monitoring, {where}: (stop + length) / all finished requests, "
                f"weighted by request rate over {len(ratios)} polls",
            )
        )
    out.extend(_gpu_utilization(target, start, end, where))
    return out


def gpu_targets_for(target: Target) -> list[Target]:
    """The GPU exporters that watch `target`'s GPUs: itself, or those of its linked machines."""
    if target.kind == TargetKind.GPU:
        return [target]
    machines = list(target.machines.values_list("pk", flat=True))
    if not machines:
        return []
    return list(
        Target.objects.filter(kind=TargetKind.GPU, machines__in=machines)
        .defer("token")
        .distinct()
        .order_by("name")
    )


def _gpu_utilization(target: Target, start: datetime, end: datetime, where: str) -> list[Measured]:
    """Mean GPU utilisation over the window, every poll of every machine weighted by its GPUs."""
    total = weight = 0.0
    names = []
    for gpu_target in gpu_targets_for(target):
        gpu_series = stores.current().window(
            stores.ref(gpu_target), (GPUS, GPU_UTILIZATION), start, end
        )
        gpus = dict(gpu_series[GPUS])
        utils = gpu_series[GPU_UTILIZATION]
        for ts, value in utils:
            count = gpus.get(ts, 1.0)
            total += value * count
            weight += count
        if utils:
            names.append(gpu_target.name)
    if weight <= 0:
        return []
    return [
        Measured(
            "gpu_utilization",
            round_measurement(total / weight, "%"),
            "%",
            f"ServePlan monitoring, {where}: mean GPU utilisation of {', '.join(names)} "
            "(each poll weighted by its GPU count)",
        )
    ]


def evidence_fill(
    *,
    target: Target,
    start: datetime,
    end: datetime,
    actor: Any | None = None,
    overwrite: Collection[str] = (),
    kinds: Collection[str] | None = None,
    accept_other_model: bool = False,
) -> EvidenceFill:
    """Write the window's measurements into the target's decision record.

    A server that serves another model than the record's is refused: its latencies say nothing
    about the decision, unless `accept_other_model` (the user's explicit override, written into
    every note). An item whose value was typed by hand is held back unless its kind is in
    `overwrite` (the user confirmed); everything else is written with the window and the source.
    `kinds` limits the fill to some evidence kinds (a confirmation only touches those it showed).
    """
    decision = target.decision
    if decision is None:
        return EvidenceFill(filled=(), held=())
    mismatch = model_mismatch(target)
    if mismatch and not accept_other_model:
        return EvidenceFill(filled=(), held=(), refused=mismatch)
    override = (
        " " + _("Recorded by explicit override although %(why)s") % {"why": mismatch}
        if mismatch
        else ""
    )
    items = evidence_items(decision.pk)
    filled: list[Measured] = []
    held: list[HeldBack] = []
    with transaction.atomic():
        for item in measure_window(target, start, end):
            if kinds is not None and item.kind not in kinds:
                continue
            current = items.get(item.kind)
            if (
                current is not None
                and current.measured_value is not None
                and current.value_source != EvidenceSource.MONITORING
                and item.kind not in overwrite
            ):
                held.append(
                    HeldBack(
                        kind=item.kind,
                        label=str(current.get_kind_display()),
                        typed_value=current.measured_value,
                        typed_unit=current.unit,
                        measured=item,
                    )
                )
                continue
            record_evidence_measurement(
                decision=decision,
                item_kind=item.kind,
                value=item.value,
                unit=item.unit,
                window_start=start,
                window_end=end,
                note=item.note + override,
                actor=actor,
            )
            filled.append(item)
    return EvidenceFill(filled=tuple(filled), held=tuple(held))
