"""Serving-model error on the published runs: mean absolute % error by split and by group.

Groups: GPU, dense/MoE, weight dtype, TP×PP, load shape (burst, closed loop, Poisson). With
`--backend aiconfigurator` (needs the `aiconfigurator` extra) steps are timed by NVIDIA's measured
kernel tables instead of the roofline; runs those tables do not cover fall back to the roofline
and are counted apart. `--both` prints the two backends side by side on the runs both cover.

`--table` prints the held-out and calibration errors by load level, GPU generation and arrival
over both fixture files (serving_runs.json and serving_load_runs.json), the table of
docs/benchmarks.md that tests/planner/engine/test_serving_validation.py holds; `--table --runs`
lists each run's signed errors before it.

`--grid` prints the same table, and each run, for lambda_v0_grid.json: Lambda's vLLM 0.5.4 grid
of one 70B FP8 model on 2-8 H100s under bursts of 7-542 requests, held out and reported apart.

Repeat: `.venv/bin/python bench/eval_serving.py [--runs] [--backend aiconfigurator | --both]`
or `.venv/bin/python bench/eval_serving.py --table [--runs]` or `... --grid`
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.data import load_models  # noqa: E402
from planner.engine.serving.backend import StepBackend  # noqa: E402
from planner.engine.serving.replay import replay, replay_context  # noqa: E402
from planner.engine.serving.validation import RunError  # noqa: E402

RUNS = json.loads((ROOT / "tests/planner/engine/fixtures/serving_runs.json").read_text())["runs"]
METRICS = ("tpot", "ttft", "tok_s")


def errors(run, pred) -> dict[str, float | None]:
    """Return the relative error per metric (None: TTFT not comparable for this run)."""
    m = run["measured"]
    ttft = pred.ttft_mean_ms / m["ttft_mean_ms"] - 1 if run.get("ttft_comparable", True) else None
    return {
        "tpot": pred.tpot_mean_ms / m["tpot_mean_ms"] - 1,
        "ttft": ttft,
        "tok_s": pred.output_tok_s / m["output_tok_s"] - 1,
    }


def groups(run) -> list[str]:
    """Return the groups a run counts in."""
    moe = load_models()[run["model_slug"]].architecture.is_moe
    return [
        f"gpu {run['gpu']}",
        "moe" if moe else "dense",
        f"dtype {run['weight_dtype']}",
        f"TP{run['tp']}xPP{run.get('pp', 1)}",
        f"load {run['load']['arrival']}",
    ]


def _mae(values: list[float]) -> str:
    return f"{100 * sum(abs(v) for v in values) / len(values):5.1f}" if values else "   - "


def table(title: str, rows: dict[str, dict[str, list[float]]]) -> None:
    print(f"\n{title}")
    print(f"  {'group':<28} {'n':>3}  TPOT %  TTFT % (n)   tok/s %")
    for name, errs in sorted(rows.items()):
        print(
            f"  {name:<28} {len(errs['tpot']):3d}  {_mae(errs['tpot'])}   {_mae(errs['ttft'])}"
            f" ({len(errs['ttft']):2d})   {_mae(errs['tok_s'])}"
        )


def evaluate(backend: StepBackend, show: bool) -> dict[str, dict[str, float | None]]:
    """Print the error tables of `backend`; return each run's errors (None if not covered)."""
    by_split: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_group: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_run: dict[str, dict[str, float | None]] = {}
    fallback = []
    t0 = time.process_time()
    for run in RUNS:
        if backend is not StepBackend.ROOFLINE:
            choice = replay_context(run, backend=backend).backend
            if choice.used is not backend:
                fallback.append(f"{run['id']}: {choice.note}")
                continue
        pred = replay(run, backend=backend)
        e = errors(run, pred)
        per_run[run["id"]] = e
        for k, v in e.items():
            if v is None:
                continue
            by_split[run["split"]][k].append(v)
            if run["split"] == "validation":
                for g in groups(run):
                    by_group[g][k].append(v)
        if show:
            m = run["measured"]
            ttft = f"{m['ttft_mean_ms']:9.0f}" if m.get("ttft_mean_ms") else "        -"
            print(
                f"{run['split'][:3]} {run['id']:<56}"
                f" tpot {pred.tpot_mean_ms:7.1f}/{m['tpot_mean_ms']:7.1f}"
                f" ttft {pred.ttft_mean_ms:9.0f}/{ttft}"
                f" tok/s {pred.output_tok_s:7.0f}/{m['output_tok_s']:7.0f}"
            )
    cpu = time.process_time() - t0
    table(f"[{backend}] by split", by_split)
    table(f"[{backend}] validation runs by group", by_group)
    print(f"[{backend}] replayed {len(per_run)} runs in {cpu * 1e3:.0f} ms CPU")
    if fallback:
        print(f"[{backend}] {len(fallback)} runs not covered (roofline kept), e.g.:")
        for line in fallback[:5]:
            print(f"    {line}")
    return per_run


def side_by_side(a: dict, b: dict) -> None:
    """Print both backends' validation MAE on the runs both cover."""
    split = {r["id"]: r["split"] for r in RUNS}
    common = [i for i in a if i in b and split[i] == "validation"]
    print(f"\nvalidation runs both backends cover: {len(common)}")
    for k in METRICS:
        pa = [a[i][k] for i in common if a[i][k] is not None]
        pb = [b[i][k] for i in common if b[i][k] is not None]
        print(f"  {k:<6} roofline {_mae(pa)} %   aiconfigurator {_mae(pb)} %   (n={len(pa)})")


def print_tables(show_runs: bool) -> None:
    """Print the Markdown error tables of the held-out and the calibration runs (and, with
    `show_runs`, each run's signed errors first)."""
    from planner.engine.serving.validation import load_runs, markdown, run_error, validation_table

    fixtures = ROOT / "tests/planner/engine/fixtures"
    runs = load_runs([fixtures / "serving_runs.json", fixtures / "serving_load_runs.json"])
    errors = [run_error(r) for r in runs]
    if show_runs:
        _print_run_errors(errors)
    for split in ("validation", "calibration"):
        print(f"\n{split} runs (mean absolute % error, runs in brackets)\n")
        print(markdown(validation_table(errors, split)))


def print_grid() -> None:
    """Print each run of the Lambda 0.5.4 grid and the grid's error table."""
    from planner.engine.serving.validation import load_runs, markdown, run_error, validation_table

    runs = load_runs([ROOT / "tests/planner/engine/fixtures/lambda_v0_grid.json"])
    errors = [run_error(r) for r in runs]
    _print_run_errors(errors)
    print("\nLambda 0.5.4 grid (mean absolute % error, runs in brackets)\n")
    # one source: the table's split by source says nothing here
    rows = [row for row in validation_table(errors) if not row.group.startswith("source")]
    print(markdown(rows))


def _signed(value: float | None) -> str:
    return "     -" if value is None else f"{100 * value:+6.1f}"


def _print_run_errors(errors: list[RunError]) -> None:
    """Print every run's signed % errors, by split and GPU generation: where the table's means
    come from, and which way each run misses."""
    print("split       generation  arrival  in flight   TPOT %  TTFT %  tok/s %  run")
    for e in sorted(errors, key=lambda e: (e.split, e.generation, e.arrival, e.in_flight)):
        print(
            f"{e.split:<11} {e.generation:<11} {e.arrival:<8} {e.in_flight:9.0f}  "
            f"{_signed(e.tpot)}  {_signed(e.ttft)}   {_signed(e.tok_s)}  {e.run_id}"
        )


def main() -> None:
    if "--table" in sys.argv:
        print_tables(show_runs="--runs" in sys.argv)
        return
    if "--grid" in sys.argv:
        print_grid()
        return
    show = "--runs" in sys.argv
    if "--both" in sys.argv:
        roof = evaluate(StepBackend.ROOFLINE, show)
        aic = evaluate(StepBackend.AICONFIGURATOR, show)
        side_by_side(roof, aic)
        return
    backend = StepBackend.ROOFLINE
    if "--backend" in sys.argv:
        backend = StepBackend(sys.argv[sys.argv.index("--backend") + 1])
    evaluate(backend, show)


if __name__ == "__main__":
    main()
