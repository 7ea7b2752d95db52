"""Fit the serving model's constants on the calibration runs (never on the validation runs).

Coordinate search (each constant × 0.7 … 1.4, two rounds) minimising the mean |log(predicted /
measured)| of TPOT and output tok/s, plus TTFT at half weight where the fixture says TTFT is
comparable, over the runs of tests/planner/engine/fixtures/serving_runs.json whose split is
"calibration". Prints the constants to put in planner/engine/assumptions.py (and the fixture's
per-source link figures) and the p80 |relative error| per metric, which become the bands.

Repeat: `/work/main/.venv/bin/python bench/fit_serving.py` (about two minutes of CPU).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.serving.replay import replay  # noqa: E402
from planner.engine.serving.validation import run_error  # noqa: E402

RUNS = json.loads((ROOT / "tests/planner/engine/fixtures/serving_runs.json").read_text())["runs"]
CAL = [r for r in RUNS if r["split"] == "calibration"]
ASSUMED = (
    "hbm_efficiency",
    "prefill_mfu",
    "decode_step_overhead_ms",
    "decode_per_seq_overhead_ms",
    "request_overhead_ms",
)
PER_SOURCE = ("tp_link_bandwidth_gbs", "tp_link_latency_us")
STEPS = (0.7, 0.85, 1.18, 1.4)


def _runs(link: dict[str, float], cal: list[dict]) -> list[dict]:
    """Return `cal` with the per-source link figures on the runs of the source they belong to."""
    return [{**r, **link} if r["tp"] > 1 and PER_SOURCE[0] in r else r for r in cal]


def residuals(a: Assumptions, runs, replay_fn=replay) -> list[tuple[float | None, ...]]:
    """Return each run's log(predicted / measured) of TPOT, TTFT and output tok/s (None where
    the run did not publish the figure or its TTFT is not comparable)."""
    out = []
    for run in runs:
        e = run_error(run, replay_fn(run, a))
        out.append(
            tuple(
                None if v is None else math.log(max(1 + v, 1e-6)) for v in (e.tpot, e.ttft, e.tok_s)
            )
        )
    return out


def assumptions(values: dict[str, float]) -> Assumptions:
    """Return the default assumptions with the fitted ones of `values`."""
    fitted = {k: v for k, v in values.items() if k not in PER_SOURCE}
    return dataclasses.replace(Assumptions(), **fitted)


def loss(values: dict[str, float], replay_fn=replay, cal: list[dict] = CAL) -> float:
    res = residuals(assumptions(values), _runs({k: values[k] for k in PER_SOURCE}, cal), replay_fn)
    weights = (1.0, 0.5, 1.0)  # TPOT, TTFT, tok/s
    total = sum(w * abs(x) for r in res for w, x in zip(weights, r, strict=True) if x is not None)
    return total / len(res)


def search(
    names: tuple[str, ...] = ASSUMED, replay_fn=replay, cal: list[dict] = CAL
) -> tuple[dict[str, float], float]:
    """Return the fitted values of `names` and the per-source link figures, and their loss,
    over the calibration runs `cal` replayed by `replay_fn` (default: the engine's)."""
    base = Assumptions()
    first = next(r for r in cal if r["tp"] > 1 and PER_SOURCE[0] in r)
    values = {k: float(getattr(base, k)) for k in names}
    values |= {k: float(first[k]) for k in PER_SOURCE}
    best = loss(values, replay_fn, cal)
    print(f"start loss {best:.4f}", flush=True)
    for _ in range(2):
        for name in (*names, *PER_SOURCE):
            for step in STEPS:
                trial = dict(values, **{name: values[name] * step})
                if name in ("hbm_efficiency", "prefill_mfu") and trial[name] > 0.95:
                    continue
                value = loss(trial, replay_fn, cal)
                if value < best - 1e-4:
                    best, values = value, trial
        print(f"round loss {best:.4f}", flush=True)
    return values, best


def main() -> None:
    values, _ = search()
    for name, value in values.items():
        print(f"    {name}: {value:.4g}")
    res = residuals(assumptions(values), _runs({k: values[k] for k in PER_SOURCE}, CAL))
    for i, name in enumerate(("tpot", "ttft", "tok_s")):
        errs = sorted(abs(math.exp(r[i]) - 1) for r in res if r[i] is not None)
        print(f"band_{name}_share: {errs[int(0.8 * (len(errs) - 1))]:.3f}")


if __name__ == "__main__":
    main()
