"""The verdict on top of a plan: route, layout, three plain sentences with numbers, SLO checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from planner.engine.messages import Code
from planner.engine.result import Backend, Candidate, PlanResult, Route
from planner.engine.summary import summary_message
from planner.labels import ROUTE_TITLES
from planner.presentation.messages import text
from planner.presentation.numbers import amount, count
from planner.presentation.shown import band_sentence, shown_speed


def nothing_fits_sentence(result: PlanResult) -> str:
    """Return what a plan where no layout fits says instead of a recommendation: the setting
    that would start it when there is one (memory/room.py), else what to change."""
    summary = result.recommendation.summary
    if summary.code == Code.SUMMARY_NOTHING_FITS_AS_SET:
        return text(summary)
    return _(
        "No layout on the offered machines starts %(model)s at %(ctx)s tokens, even "
        "quantized: add GPUs, shorten the context or pick a smaller model."
    ) % {
        "model": result.model.name,
        "ctx": count(result.model.max_model_len),
    }


def recommendation_sentence(
    result: PlanResult, engine_input: Mapping[str, Any] | None = None
) -> str:
    """Return the recommendation in one sentence, in the reader's language.

    A plan saved before messages were codes stored its summary in English; with the
    concurrency it was asked for (`engine_input`), its sentence is rebuilt from its figures.
    """
    rec, best = result.recommendation, result.best
    if not rec.fits:
        # The engine's best effort that does not fit is no layout to serve with.
        return nothing_fits_sentence(result)
    concurrency = ((engine_input or {}).get("workload") or {}).get("concurrency")
    if rec.summary.code == Code.LEGACY and best is not None and isinstance(concurrency, int):
        return text(
            summary_message(
                best,
                model_name=result.model.name,
                max_model_len=result.model.max_model_len,
                concurrency=concurrency,
                recommendation=(rec.route, rec.weight_dtype, rec.executor_backend, rec.balancer),
            )
        )
    return text(rec.summary)


@dataclass(frozen=True, slots=True, kw_only=True)
class SloCheck:
    metric: str
    target_ms: str
    estimate_ms: str
    met: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    title: str
    layout: str
    fits: bool
    sentences: tuple[str, ...]
    slo_checks: tuple[SloCheck, ...]
    band_note: str = ""  # what the ± bands of the speed sentence mean, in plain words

    @property
    def slo_met(self) -> bool | None:
        """Return whether every SLO entered is met (None when none was entered)."""
        return all(c.met for c in self.slo_checks) if self.slo_checks else None


def _fit_sentence(result: PlanResult, best: Candidate) -> str:
    values = {
        "weights": amount(best.memory.weights_gib, 1),
        "seqs": count(best.max_concurrency_per_replica),
        "ctx": count(result.model.max_model_len),
        "dtype": result.recommendation.weight_dtype,
    }
    if best.spans_nodes:
        return _(
            "The model does not fit one node: each replica spans %(nodes)s nodes (%(gpus)s "
            "GPUs, %(weights)s GiB of %(dtype)s weights per GPU) and holds %(seqs)s sequences "
            "of %(ctx)s tokens."
        ) % {**values, "nodes": count(best.nodes_per_replica), "gpus": count(best.gpus_per_replica)}
    return (
        _(
            "The model fits inside one node: %(weights)s GiB of %(dtype)s weights per GPU leave "
            "room for %(seqs)s sequences of %(ctx)s tokens per replica."
        )
        % values
    )


def _speed_sentence(result: PlanResult, best: Candidate) -> str:
    speed = shown_speed(best, result)
    if speed is None:
        return ""
    values = {
        "replicas": count(best.replicas),
        "tok": speed.tok_s_text(),
        "ttft": speed.ttft_text(),
        "itl": speed.tpot_text(),
        "concurrency": count(best.serving.concurrency if best.serving else best.batch_per_replica),
    }
    if speed.ttft_p95_ms is not None:
        return ngettext(
            "At %(concurrency)s requests in flight, %(replicas)s replica delivers about %(tok)s "
            "output tokens/s; a request waits about %(ttft)s ms for its first token (p95 "
            "%(ttft95)s ms), then %(itl)s ms per token.",
            "At %(concurrency)s requests in flight, %(replicas)s replicas deliver about %(tok)s "
            "output tokens/s; a request waits about %(ttft)s ms for its first token (p95 "
            "%(ttft95)s ms), then %(itl)s ms per token.",
            best.replicas,
        ) % {**values, "ttft95": amount(speed.ttft_p95_ms)}
    return (
        ngettext(
            "%(replicas)s replica delivers about %(tok)s output tokens/s; a request waits about "
            "%(ttft)s ms for its first token, then %(itl)s ms per token.",
            "%(replicas)s replicas deliver about %(tok)s output tokens/s; a request waits about "
            "%(ttft)s ms for its first token, then %(itl)s ms per token.",
            best.replicas,
        )
        % values
    )


def _operations_sentence(result: PlanResult, best: Candidate) -> str:
    rec = result.recommendation
    if rec.route == Route.C:
        return _(
            "The team runs a Ray cluster (a head and a worker per node) and Ray Serve, which "
            "restarts and scales the replicas."
        )
    if rec.route == Route.B and rec.executor_backend == Backend.RAY:
        return _(
            "The team runs a Ray cluster across the %(nodes)s nodes; one failed node stops the "
            "whole instance."
        ) % {"nodes": count(best.nodes_per_replica)}
    if rec.route == Route.B:
        return _(
            "The team starts one vLLM process per node (rank 0 first), no Ray; one failed node "
            "stops the whole instance."
        )
    if rec.route == Route.A:
        return _(
            "The team runs %(replicas)s independent vLLM servers behind %(balancer)s; a failed "
            "server drops out of rotation while the others keep serving. No Ray."
        ) % {"replicas": count(best.replicas), "balancer": rec.balancer}
    return _("The team runs one vLLM server; nothing else. No Ray.")


def _slo_checks(best: Candidate, workload: Mapping[str, Any]) -> tuple[SloCheck, ...]:
    """Return a check per SLO entered: the p95 estimate when simulated, else the mean."""
    serving = best.serving
    checks = []
    for key, metric, p95, mean in (
        ("ttft_slo_ms", _("Time to first token"), "ttft_p95_ms", best.ttft_ms),
        ("itl_slo_ms", _("Inter-token latency"), "itl_p95_ms", best.itl_ms),
    ):
        target = workload.get(key)
        if target is None:
            continue
        estimate = getattr(serving, p95) if serving is not None else mean
        label = metric + (" (p95)" if serving is not None else "")
        checks.append(
            SloCheck(
                metric=label,
                target_ms=amount(float(target)),
                estimate_ms=amount(estimate),
                met=estimate <= float(target),
            )
        )
    return tuple(checks)


def plan_verdict(result: PlanResult, engine_input: Mapping[str, Any] | None = None) -> Verdict:
    """Return the verdict of a result; `engine_input` supplies the SLOs the user entered."""
    rec, best = result.recommendation, result.best
    title = str(ROUTE_TITLES[rec.route])
    if best is None and rec.fits:
        # A snapshot of an earlier engine that kept the recommendation but not its figures.
        return Verdict(
            title=title,
            layout=rec.label,
            fits=True,
            sentences=(
                _(
                    "This plan was saved by an earlier engine without the figures of its "
                    "layout; re-run it with the current engine for the numbers."
                ),
            ),
            slo_checks=(),
        )
    if best is None or not rec.fits:
        return Verdict(
            title=title,
            layout="",
            fits=False,
            sentences=(nothing_fits_sentence(result),),
            slo_checks=(),
        )
    workload = (engine_input or {}).get("workload") or {}
    return Verdict(
        title=title,
        layout=rec.label,
        fits=True,
        sentences=tuple(
            s
            for s in (
                _fit_sentence(result, best),
                _speed_sentence(result, best),
                _operations_sentence(result, best),
            )
            if s
        ),
        slo_checks=_slo_checks(best, workload),
        band_note=band_sentence(shown_speed(best, result)),
    )
