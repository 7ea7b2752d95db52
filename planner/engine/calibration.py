"""Fit a team's correction factors from measured servers, with their uncertainty.

Four factors, per GPU type × model family × weight dtype:
- kv_overhead_gib: memory per GPU the server keeps out of the KV cache beyond the engine's
  estimate (from vLLM's num_gpu_blocks against the predicted blocks); added to non-torch memory.
- decode_efficiency: multiplies the achievable HBM bandwidth and decode MFU (inter-token latency).
- prefill_efficiency: multiplies the prefill MFU (time to first token).
- per_request_overhead_ms: decode-step time per running request (replaces the engine's constant).

The latency factors are fitted jointly by non-linear least squares (scipy) on relative errors of
the engine's own predictions at each observed concurrency; their standard errors come from the
Jacobian at the optimum (σ² (JᵀJ)⁻¹). A factor the data cannot identify (no TTFT, a single
concurrency level) keeps the engine's value and reports no uncertainty.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import least_squares

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from planner.engine.at_concurrency import ReplicaLayout, ServingPoint, predict_replica
from planner.engine.spec import PlanSpec

FACTOR_UNITS = {
    "kv_overhead_gib": "GiB",
    "decode_efficiency": "×",
    "prefill_efficiency": "×",
    "per_request_overhead_ms": "ms",
}
EFFICIENCY_BOUNDS = (0.05, 20.0)
PER_REQUEST_BOUNDS_MS = (0.0, 10.0)
# Latencies a server can have measured: a microsecond to a day. Outside, the exporter's
# histogram buckets (le="1e-320") made the number, and relative residuals overflow.
MEASURED_LATENCY_MS = (1e-3, 86_400_000.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationFactors:
    kv_overhead_gib: float = 0.0
    decode_efficiency: float = 1.0
    prefill_efficiency: float = 1.0
    per_request_overhead_ms: float | None = None  # None: the engine's constant


def calibrated(a: Assumptions, f: CalibrationFactors) -> Assumptions:
    """Return the assumptions corrected by the factors.

    A fitted per-request overhead was measured on the team's own server, whichever vLLM engine
    it runs, so it replaces the per-sequence host work of every engine era (serving/host.py),
    a V0 replica's broadcast to its other GPUs included.
    """
    corrected = replace(
        a,
        extra_non_torch_gib=a.extra_non_torch_gib + f.kv_overhead_gib,
        hbm_efficiency=a.hbm_efficiency * f.decode_efficiency,
        decode_mfu=a.decode_mfu * f.decode_efficiency,
        prefill_mfu=a.prefill_mfu * f.prefill_efficiency,
    )
    if f.per_request_overhead_ms is None:
        return corrected
    return replace(
        corrected,
        decode_per_seq_overhead_ms=f.per_request_overhead_ms,
        v0_per_seq_overhead_ms=f.per_request_overhead_ms,
        v0_in_process_per_seq_overhead_ms=f.per_request_overhead_ms,
        v0_multi_gpu_per_seq_overhead_ms=0.0,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Observation:
    """What one replica did at one concurrency level (a target's polls, binned)."""

    source: str
    spec: PlanSpec
    layout: ReplicaLayout
    concurrency: float
    avg_input_tokens: float | None = None
    avg_output_tokens: float | None = None
    itl_ms: float | None = None
    ttft_ms: float | None = None
    kv_blocks: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    value: float
    stderr: float | None  # None: not identifiable from these data (the value is the engine's)
    fitted: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Residual:
    source: str
    quantity: str  # itl_ms | ttft_ms | kv_blocks
    concurrency: float
    measured: float
    before: float
    after: float

    @property
    def error_before_pct(self) -> float:
        return 100.0 * (self.before - self.measured) / self.measured

    @property
    def error_after_pct(self) -> float:
        return 100.0 * (self.after - self.measured) / self.measured


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationFit:
    factors: CalibrationFactors
    estimates: dict[str, Estimate]
    residuals: tuple[Residual, ...]
    observations: int

    @property
    def rms_before_pct(self) -> float | None:
        return self.rms_pct("before")

    @property
    def rms_after_pct(self) -> float | None:
        return self.rms_pct("after")

    def rms_pct(self, which: str) -> float | None:
        """Return the RMS relative error of the predictions 'before' or 'after', in %."""
        errors = [
            r.error_before_pct if which == "before" else r.error_after_pct for r in self.residuals
        ]
        return math.sqrt(statistics.fmean(e * e for e in errors)) if errors else None


class NotEnoughData(ValueError):
    """The observations cannot support a fit (nothing measured)."""


class UnusableMeasurement(NotEnoughData):
    """A measured latency no server can have: the fit refuses it rather than overflow."""

    def __init__(self, *, source: str, quantity: str, value_ms: float) -> None:
        low, high = MEASURED_LATENCY_MS
        super().__init__(
            f"{source}: {quantity} {value_ms:g} ms is outside [{low:g}, {high:g}] ms, "
            "not a latency a server measures"
        )
        self.source = source
        self.quantity = quantity
        self.value_ms = value_ms


def _check_measurements(observations: Sequence[Observation]) -> None:
    """Raise UnusableMeasurement for the first latency outside MEASURED_LATENCY_MS."""
    low, high = MEASURED_LATENCY_MS
    for obs in observations:
        for quantity, value in (("itl_ms", obs.itl_ms), ("ttft_ms", obs.ttft_ms)):
            if value and not low <= value <= high:  # NaN fails the comparison too
                raise UnusableMeasurement(source=obs.source, quantity=quantity, value_ms=value)


def _predict(obs: Observation, a: Assumptions) -> ServingPoint:
    return predict_replica(
        obs.spec,
        obs.layout,
        concurrency_per_replica=obs.concurrency,
        avg_input_tokens=obs.avg_input_tokens,
        avg_output_tokens=obs.avg_output_tokens,
        a=a,
    )


def _fit_kv_overhead(observations: Sequence[Observation], base: Assumptions) -> Estimate:
    """Return the mean extra GiB per GPU the servers kept out of the KV cache, one per source."""
    per_source: dict[str, float] = {}
    for obs in observations:
        if obs.kv_blocks is None or obs.source in per_source:
            continue
        point = _predict(obs, base)
        observed_gib = point.kv_gib_of(obs.kv_blocks, base.block_size_tokens)
        per_source[obs.source] = point.kv_budget_gib - observed_gib
    values = list(per_source.values())
    if not values:
        return Estimate(value=0.0, stderr=None, fitted=False)
    stderr = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    return Estimate(value=statistics.fmean(values), stderr=stderr, fitted=True)


LatencyParams = tuple[float, float, float]  # decode efficiency, prefill efficiency, per-request ms


def _latency_model(
    observations: Sequence[Observation], base: Assumptions
) -> Callable[[LatencyParams], list[tuple[Observation, str, float, float]]]:
    """Return params → [(observation, quantity, predicted, measured)] for every measured latency."""

    def run(params: LatencyParams) -> list[tuple[Observation, str, float, float]]:
        decode, prefill, per_request = params
        a = calibrated(
            base,
            CalibrationFactors(
                decode_efficiency=decode,
                prefill_efficiency=prefill,
                per_request_overhead_ms=per_request,
            ),
        )
        out = []
        for obs in observations:
            point = _predict(obs, a)
            if obs.itl_ms:
                out.append((obs, "itl_ms", point.itl_ms, obs.itl_ms))
            if obs.ttft_ms:
                out.append((obs, "ttft_ms", point.ttft_ms, obs.ttft_ms))
        return out

    return run


def _fit_latency(
    observations: Sequence[Observation], base: Assumptions
) -> tuple[dict[str, Estimate], LatencyParams]:
    has_itl = any(o.itl_ms for o in observations)
    has_ttft = any(o.ttft_ms for o in observations)
    levels = {round(o.concurrency, 1) for o in observations if o.itl_ms}
    free = [has_itl, has_ttft, has_itl and len(levels) >= 2]
    start: LatencyParams = (1.0, 1.0, base.decode_per_seq_overhead_ms)
    names = ("decode_efficiency", "prefill_efficiency", "per_request_overhead_ms")
    if not any(free):
        return {
            n: Estimate(value=v, stderr=None, fitted=False)
            for n, v in zip(names, start, strict=True)
        }, start
    model = _latency_model(observations, base)
    index = [i for i, f in enumerate(free) if f]

    def full(x: np.ndarray) -> LatencyParams:
        params = list(start)
        for i, value in zip(index, x, strict=True):
            params[i] = float(value)
        return (params[0], params[1], params[2])

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.array([(p - m) / m for _o, _q, p, m in model(full(x))])

    lower = [EFFICIENCY_BOUNDS[0], EFFICIENCY_BOUNDS[0], PER_REQUEST_BOUNDS_MS[0]]
    upper = [EFFICIENCY_BOUNDS[1], EFFICIENCY_BOUNDS[1], PER_REQUEST_BOUNDS_MS[1]]
    try:
        result = least_squares(
            residuals,
            x0=np.array([start[i] for i in index]),
            bounds=([lower[i] for i in index], [upper[i] for i in index]),
            x_scale="jac",
            diff_step=1e-4,
        )
    except ValueError as exc:  # scipy: "Residuals are not finite in the initial point"
        raise NotEnoughData(f"the measurements give no finite residuals ({exc})") from None
    stderr = _standard_errors(result.jac, result.fun, len(index))
    fitted = full(result.x)
    estimates = {}
    for i, name in enumerate(names):
        if i in index:
            estimates[name] = Estimate(value=fitted[i], stderr=stderr[index.index(i)], fitted=True)
        else:
            estimates[name] = Estimate(value=start[i], stderr=None, fitted=False)
    return estimates, fitted


def _standard_errors(jac: np.ndarray, fun: np.ndarray, n: int) -> list[float | None]:
    """Return √diag(σ² (JᵀJ)⁻¹), σ² = Σr² / (m − n); None when the data cannot tell."""
    m = len(fun)
    if m <= n:
        return [None] * n
    sigma2 = float(fun @ fun) / (m - n)
    try:
        cov = np.linalg.inv(jac.T @ jac) * sigma2
    except np.linalg.LinAlgError:
        return [None] * n
    return [math.sqrt(v) if math.isfinite(v) and v >= 0 else None for v in np.diag(cov).tolist()]


def fit_calibration(
    observations: Sequence[Observation], base: Assumptions = DEFAULT_ASSUMPTIONS
) -> CalibrationFit:
    """Return the factors that best explain the observations, with standard errors and residuals."""
    if not observations:
        raise NotEnoughData("no observation to fit")
    _check_measurements(observations)
    kv = _fit_kv_overhead(observations, base)
    with_kv = calibrated(base, CalibrationFactors(kv_overhead_gib=kv.value))
    latency, params = _fit_latency(observations, with_kv)
    factors = CalibrationFactors(
        kv_overhead_gib=kv.value,
        decode_efficiency=params[0],
        prefill_efficiency=params[1],
        per_request_overhead_ms=params[2] if latency["per_request_overhead_ms"].fitted else None,
    )
    after = calibrated(base, factors)
    residuals: list[Residual] = []
    before_model = _latency_model(observations, base)((1.0, 1.0, base.decode_per_seq_overhead_ms))
    after_model = _latency_model(observations, after)((1.0, 1.0, after.decode_per_seq_overhead_ms))
    for (obs, quantity, before, measured), (_o, _q, predicted, _m) in zip(
        before_model, after_model, strict=True
    ):
        residuals.append(
            Residual(
                source=obs.source,
                quantity=quantity,
                concurrency=obs.concurrency,
                measured=measured,
                before=before,
                after=predicted,
            )
        )
    seen: set[str] = set()
    for obs in observations:
        if obs.kv_blocks is None or obs.source in seen:
            continue
        seen.add(obs.source)
        residuals.append(
            Residual(
                source=obs.source,
                quantity="kv_blocks",
                concurrency=obs.concurrency,
                measured=float(obs.kv_blocks),
                before=float(_predict(obs, base).kv_blocks),
                after=float(_predict(obs, after).kv_blocks),
            )
        )
    return CalibrationFit(
        factors=factors,
        estimates={"kv_overhead_gib": kv, **latency},
        residuals=tuple(residuals),
        observations=len(observations),
    )
