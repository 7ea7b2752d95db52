"""Calibrate the planner from what linked servers measured over a chosen window.

Each target linked to a plan gives observations: its polls binned by running requests, with the
median inter-token latency and TTFT of each bin (per-poll p50s: the engine predicts a typical
request, not a tail), the request lengths of the window and the server's KV blocks. The fit
itself is pure (planner.engine.calibration); this gathers the data and saves the profile.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from monitoring import stores
from monitoring.models import PlanScope, Target, TargetKind
from monitoring.reality.observation import OBSERVED_KEYS, RUNNING, observation
from monitoring.series import Points, StoreUnavailable
from planner.engine.calibration import (
    CalibrationFit,
    NotEnoughData,
    Observation,
    UnusableMeasurement,
    fit_calibration,
)
from planner.engine.spec import PlanSpec
from planner.models import CalibrationProfile
from planner.selectors.plan_values import (
    PlanUnreadable,
    PlanValues,
    calibration_key,
    plan_spec,
    plan_values,
)
from planner.services.calibration import calibration_profile_save, factors_json, residuals_json

ITL_P50 = "vllm.inter_token_latency_seconds.p50"
TTFT_P50 = "vllm.ttft_seconds.p50"
MAX_BINS = 8
MIN_POLLS_PER_BIN = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationRun:
    gpu: str
    model_family: str
    weight_dtype: str
    start: datetime
    end: datetime
    sources: list[dict[str, Any]]
    fit: CalibrationFit

    @property
    def key(self) -> str:
        return calibration_key(self.gpu, self.model_family, self.weight_dtype)

    @property
    def factors(self) -> dict[str, dict[str, Any]]:
        return factors_json(self.fit)

    @property
    def residuals(self) -> list[dict[str, Any]]:
        return residuals_json(self.fit)


def _polls(series: Mapping[str, Points]) -> list[tuple[float, float, float]]:
    """Return (running, ITL p50 ms, TTFT p50 ms) of every poll with requests and latencies."""
    running = dict(series[RUNNING])
    itl = dict(series[ITL_P50])
    ttft = dict(series[TTFT_P50])
    return [
        (running[t], itl[t] * 1000.0, ttft.get(t, 0.0) * 1000.0)
        for t in running
        if running[t] > 0 and t in itl
    ]


def _bins(polls: list[tuple[float, float, float]]) -> list[list[tuple[float, float, float]]]:
    """Split polls, ordered by concurrency, into up to MAX_BINS groups of similar size."""
    ordered = sorted(polls)
    count = max(1, min(MAX_BINS, len(ordered) // MIN_POLLS_PER_BIN))
    size = len(ordered) / count
    return [ordered[round(i * size) : round((i + 1) * size)] for i in range(count)]


def _observations(
    target: Target, values: PlanValues, spec: PlanSpec, start: datetime, end: datetime
) -> list[Observation]:
    keys = (*OBSERVED_KEYS, ITL_P50, TTFT_P50)
    series = stores.current().window(stores.ref(target), keys, start, end)
    seen = observation(target, series)
    share = values.replicas if target.plan_scope == PlanScope.PLAN else 1
    out = []
    for group in _bins(_polls(series)):
        if not group:
            continue
        ttfts = [p[2] for p in group if p[2] > 0]
        out.append(
            Observation(
                source=target.name,
                spec=spec,
                layout=values.replica.layout,
                concurrency=statistics.median(p[0] for p in group) / share,
                avg_input_tokens=seen.avg_input_tokens,
                avg_output_tokens=seen.avg_output_tokens,
                itl_ms=statistics.median(p[1] for p in group),
                ttft_ms=statistics.median(ttfts) if ttfts else None,
                kv_blocks=seen.served.kv_blocks,
            )
        )
    if not out and seen.served.kv_blocks is not None:
        out.append(
            Observation(
                source=target.name,
                spec=spec,
                layout=values.replica.layout,
                concurrency=max(values.replica.concurrency, 1.0),
                kv_blocks=seen.served.kv_blocks,
            )
        )
    return out


def calibration_run(*, targets: Sequence[Target], start: datetime, end: datetime) -> CalibrationRun:
    """Fit correction factors from the targets' window; raise ValidationError naming the field."""
    if not targets:
        raise ValidationError({"targets": _("Choose at least one target linked to a plan.")})
    if end <= start:
        raise ValidationError({"window": _("The window ends before it starts.")})
    keys: dict[tuple[str, str, str], list[str]] = {}
    observations: list[Observation] = []
    sources = []
    for target in targets:
        if target.kind != TargetKind.VLLM or target.plan is None:
            raise ValidationError(
                {
                    "targets": _("%(name)s is not a vLLM target linked to a plan.")
                    % {"name": target.name}
                }
            )
        try:
            values = plan_values(target.plan)
            found = _observations(target, values, plan_spec(target.plan), start, end)
        except PlanUnreadable as exc:
            raise ValidationError({"targets": str(exc)}) from exc
        except StoreUnavailable:  # a read-only target's Prometheus: unset or not answering
            raise ValidationError(
                {
                    "targets": _("%(name)s: its time-series server does not answer.")
                    % {"name": target.name}
                }
            ) from None
        layout = values.replica.layout
        keys.setdefault((layout.gpu, values.model_family, layout.weight_dtype), []).append(
            target.name
        )
        observations += found
        sources.append(
            {
                "target_id": target.pk,
                "target": target.name,
                "plan": values.public_id,
                "observations": len(found),
            }
        )
    if len(keys) > 1:
        groups = "; ".join(f"{'/'.join(k)}: {', '.join(v)}" for k, v in keys.items())
        raise ValidationError(
            {
                "targets": _(
                    "A profile is for one GPU type × model family × dtype; these targets mix "
                    "several (%(groups)s)."
                )
                % {"groups": groups}
            }
        )
    try:
        fit = fit_calibration(observations)
    except UnusableMeasurement as exc:
        raise ValidationError(
            {
                "window": _(
                    "%(target)s measured a %(quantity)s of %(value)s ms in this window, which no "
                    "server can: check its exporter's histogram buckets."
                )
                % {"target": exc.source, "quantity": exc.quantity, "value": f"{exc.value_ms:g}"}
            }
        ) from None
    except NotEnoughData:
        raise ValidationError(
            {"window": _("No poll in this window had running requests and latencies to fit.")}
        ) from None
    gpu, family, dtype = next(iter(keys))
    return CalibrationRun(
        gpu=gpu,
        model_family=family,
        weight_dtype=dtype,
        start=start,
        end=end,
        sources=sources,
        fit=fit,
    )


def calibration_create(
    *, targets: Sequence[Target], start: datetime, end: datetime, actor: Any | None = None
) -> CalibrationProfile:
    """Fit the targets' window and save it as the next version of its profile."""
    run = calibration_run(targets=targets, start=start, end=end)
    return calibration_profile_save(
        fit=run.fit,
        gpu=run.gpu,
        model_family=run.model_family,
        weight_dtype=run.weight_dtype,
        window_start=start,
        window_end=end,
        sources=run.sources,
        actor=actor,
    )
