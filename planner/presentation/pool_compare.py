"""Compare two pool results (a pool plan and its "what if"): the pool's totals and each model.

Every figure is read from the two typed results; a model present on one side only is said to
be added or removed, and a model that lost its GPUs is said to be not placed, with why.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

from planner.engine.pool.result import PlacedModel, PoolResult
from planner.presentation.compare import DiffRow
from planner.presentation.messages import text


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSide:
    """One model on one side: its layout in words, or why it has none."""

    layout: str  # "TP4 × 2 on a100-80g" / "not placed: …" / "not in this pool"
    gpus: int
    slo_met: bool | None  # None: not placed
    output_tok_s: float | None  # the serving model's prediction (the figure the page shows)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChange:
    name: str
    before: ModelSide
    after: ModelSide

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolComparison:
    totals: tuple[DiffRow, ...]
    models: tuple[ModelChange, ...]

    @property
    def changed_count(self) -> int:
        return sum(r.changed for r in self.totals) + sum(m.changed for m in self.models)


def _layout(m: PlacedModel) -> str:
    return _("TP%(tp)s × %(replicas)s on %(gpu)s") % {
        "tp": m.tp,
        "replicas": m.replicas,
        "gpu": m.gpu,
    }


def _side(result: PoolResult, name: str) -> ModelSide:
    placed = result.model(name)
    if placed is not None:
        prediction = placed.prediction
        return ModelSide(
            layout=_layout(placed),
            gpus=placed.gpus,
            slo_met=placed.slo_met,
            output_tok_s=None if prediction is None else prediction.output_tok_s,
        )
    unplaced = next((u for u in result.unplaced if u.name == name), None)
    layout = (
        _("not in this pool")
        if unplaced is None
        else _("not placed: %(why)s") % {"why": text(unplaced.reason)}
    )
    return ModelSide(layout=layout, gpus=0, slo_met=None, output_tok_s=None)


def _names(result: PoolResult) -> list[str]:
    return [m.name for m in (*result.placed, *result.unplaced)]


def _first_to_hurt(result: PoolResult) -> str | None:
    return None if result.first_to_hurt is None else result.first_to_hurt.name


def compare_pools(left: PoolResult, right: PoolResult) -> PoolComparison:
    """Return the pool totals and every model of either side, before and after."""
    totals = (
        DiffRow(
            key="route",
            label=_("Route"),
            left=left.route.route.value,
            right=right.route.route.value,
        ),
        DiffRow(key="gpus_used", label=_("GPUs used"), left=left.gpus_used, right=right.gpus_used),
        DiffRow(
            key="spare_gpus",
            label=_("GPUs spare"),
            left=sum(left.spare_gpus.values()),
            right=sum(right.spare_gpus.values()),
        ),
        DiffRow(
            key="unplaced",
            label=_("Models not placed"),
            left=len(left.unplaced),
            right=len(right.unplaced),
        ),
        DiffRow(
            key="first_to_hurt",
            label=_("First to hurt when the load grows"),
            left=_first_to_hurt(left),
            right=_first_to_hurt(right),
        ),
    )
    names = list(dict.fromkeys([*_names(left), *_names(right)]))
    models = tuple(ModelChange(name=n, before=_side(left, n), after=_side(right, n)) for n in names)
    return PoolComparison(totals=totals, models=models)
