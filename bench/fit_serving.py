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


def _runs(link: dict[str, float]) -> list[dict]:
    return [{**r, **link} if r["tp"] > 1 else r for r in CAL]


def residuals(a: Assumptions, runs, replay_fn=replay) -> list[tuple[float, float | None, float]]:
    out = []
    for run in runs:
        p = replay_fn(run, a)
        m = run["measured"]
        ttft = None
        if run.get("ttft_comparable", True):
            ttft = math.log(max(p.ttft_mean_ms, 1e-3) / m["ttft_mean_ms"])
        out.append(
            (
                math.log(p.tpot_mean_ms / m["tpot_mean_ms"]),
                ttft,
                math.log(p.output_tok_s / m["output_tok_s"]),
            )
        )
    return out


def assumptions(values: dict[str, float]) -> Assumptions:
    """Return the default assumptions with the fitted ones of `values`."""
    return dataclasses.replace(Assumptions(), **{k: v for k, v in values.items() if k in ASSUMED})


def loss(values: dict[str, float], replay_fn=replay) -> float:
    res = residuals(assumptions(values), _runs({k: values[k] for k in PER_SOURCE}), replay_fn)
    total = sum(abs(t) + abs(o) + (0.5 * abs(f) if f is not None else 0.0) for t, f, o in res)
    return total / len(res)


def search(names: tuple[str, ...] = ASSUMED, replay_fn=replay) -> tuple[dict[str, float], float]:
    """Return the fitted values of `names` and the per-source link figures, and their loss,
    for the model `replay_fn` replays runs with (default: the engine's)."""
    base = Assumptions()
    first = CAL[0] if CAL[0]["tp"] > 1 else next(r for r in CAL if r["tp"] > 1)
    values = {k: float(getattr(base, k)) for k in names}
    values |= {k: float(first[k]) for k in PER_SOURCE}
    best = loss(values, replay_fn)
    print(f"start loss {best:.4f}", flush=True)
    for _ in range(2):
        for name in (*names, *PER_SOURCE):
            for step in STEPS:
                trial = dict(values, **{name: values[name] * step})
                if name in ("hbm_efficiency", "prefill_mfu") and trial[name] > 0.95:
                    continue
                value = loss(trial, replay_fn)
                if value < best - 1e-4:
                    best, values = value, trial
        print(f"round loss {best:.4f}", flush=True)
    return values, best


def main() -> None:
    values, _ = search()
    for name, value in values.items():
        print(f"    {name}: {value:.4g}")
    res = residuals(assumptions(values), _runs({k: values[k] for k in PER_SOURCE}))
    for i, name in enumerate(("tpot", "ttft", "tok_s")):
        errs = sorted(abs(math.exp(r[i]) - 1) for r in res if r[i] is not None)
        print(f"band_{name}_share: {errs[int(0.8 * (len(errs) - 1))]:.3f}")


if __name__ == "__main__":
    main()
