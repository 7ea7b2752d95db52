"""Serving-model error on the published runs: per run and mean absolute % error by split.

Repeat: `/work/main/.venv/bin/python bench/eval_serving.py [--runs]`
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.engine.serving.replay import replay  # noqa: E402

RUNS = json.loads((ROOT / "tests/planner/engine/fixtures/serving_runs.json").read_text())["runs"]


def errors(run, pred):
    m = run["measured"]
    return {
        "tpot": pred.tpot_mean_ms / m["tpot_mean_ms"] - 1,
        "ttft": pred.ttft_mean_ms / m["ttft_mean_ms"] - 1,
        "tok_s": pred.output_tok_s / m["output_tok_s"] - 1,
    }


def main() -> None:
    show = "--runs" in sys.argv
    by_split: dict[str, dict[str, list[float]]] = {}
    t0 = time.process_time()
    for run in RUNS:
        pred = replay(run)
        e = errors(run, pred)
        split = by_split.setdefault(run["split"], {"tpot": [], "ttft": [], "tok_s": []})
        for k, v in e.items():
            if k == "ttft" and not run.get("ttft_comparable", True):
                continue
            split[k].append(abs(v))
        if show:
            m = run["measured"]
            print(
                f"{run['split'][:3]} {run['id']:<50}"
                f" tpot {pred.tpot_mean_ms:7.1f}/{m['tpot_mean_ms']:7.1f}"
                f" ttft {pred.ttft_mean_ms:9.0f}/{m['ttft_mean_ms']:9.0f}"
                f" tok/s {pred.output_tok_s:7.0f}/{m['output_tok_s']:7.0f}"
            )
    cpu = time.process_time() - t0
    for split, errs in sorted(by_split.items()):
        n, nf = len(errs["tpot"]), max(len(errs["ttft"]), 1)
        print(
            f"{split:<12} n={n:3d}  MAE TPOT {100 * sum(errs['tpot']) / n:5.1f} %  "
            f"TTFT {100 * sum(errs['ttft']) / nf:5.1f} % (n={len(errs['ttft'])})  "
            f"output tok/s {100 * sum(errs['tok_s']) / n:5.1f} %"
        )
    print(f"replayed {len(RUNS)} runs in {cpu * 1e3:.0f} ms CPU")


if __name__ == "__main__":
    main()
