"""Write planner/engine/serving/bands.json: the uncertainty bands from the calibration residuals.

Replays every calibration run of tests/planner/engine/fixtures/serving_runs.json (never the
validation runs) with each step backend available here, groups the runs by regime (GPU
generation / dense or MoE / dtype / load shape / backend) and stores the p80 |relative error|
of TTFT, TPOT and output tok/s per regime. Regimes with no calibration runs get the
`uncalibrated` band: twice the worst calibrated p80, at least the floors below.

Repeat: `.venv/bin/python bench/fit_bands.py` (a few seconds per backend).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.engine.serving.backend import StepBackend  # noqa: E402
from planner.engine.serving.bands import BANDS_FILE  # noqa: E402
from planner.engine.serving.replay import replay, replay_context, run_regime  # noqa: E402

RUNS = json.loads((ROOT / "tests/planner/engine/fixtures/serving_runs.json").read_text())["runs"]
CAL = [r for r in RUNS if r["split"] == "calibration"]
FLOOR = {"ttft": 0.05, "tpot": 0.05, "tok_s": 0.05}  # sampling noise of a benchmark run
UNCALIBRATED_MIN = {"ttft": 0.5, "tpot": 0.3, "tok_s": 0.3}


def p80(values: list[float]) -> float:
    s = sorted(values)
    return round(s[int(0.8 * (len(s) - 1))], 3) if s else 0.0


def residuals(backend: StepBackend) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in CAL:
        if replay_context(run, backend=backend).backend.used is not backend:
            continue
        pred, m = replay(run, backend=backend), run["measured"]
        row = out[run_regime(run, backend)]
        row["tpot"].append(abs(pred.tpot_mean_ms / m["tpot_mean_ms"] - 1))
        row["tok_s"].append(abs(pred.output_tok_s / m["output_tok_s"] - 1))
        if run.get("ttft_comparable", True):
            row["ttft"].append(abs(pred.ttft_mean_ms / m["ttft_mean_ms"] - 1))
    return out


def main() -> None:
    backends = [StepBackend.ROOFLINE]
    if importlib.util.find_spec("aiconfigurator_core") is not None:
        backends.append(StepBackend.AICONFIGURATOR)
    regimes = {}
    for backend in backends:
        for key, errs in residuals(backend).items():
            regimes[key] = {
                "runs": len(errs["tpot"]),
                "ttft_runs": len(errs["ttft"]),
                **{k: p80(errs[k]) for k in ("ttft", "tpot", "tok_s")},
            }
    worst = {k: max(r[k] for r in regimes.values()) for k in ("ttft", "tpot", "tok_s")}
    wide = {k: round(max(2 * worst[k], UNCALIBRATED_MIN[k]), 3) for k in worst}
    doc = {
        "about": "Written by bench/fit_bands.py from the calibration runs; do not edit by hand.",
        "floor": FLOOR,
        "uncalibrated": {
            **wide,
            "why": "twice the worst calibrated p80 error, at least ±50 % TTFT, ±30 % TPOT and "
            "tok/s",
        },
        "regimes": dict(sorted(regimes.items())),
    }
    BANDS_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    for key, row in doc["regimes"].items():
        print(f"{key:<48} {row}")
    print("uncalibrated", doc["uncalibrated"])


if __name__ == "__main__":
    main()
