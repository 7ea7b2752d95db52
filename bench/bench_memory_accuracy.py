"""The memory model against real vLLM start-up logs: MAE by split, TP, family and dtype.

Targets (issue 13): KV tokens MAE ≤ 3 %, weights ≤ 1 %, max concurrency ≤ 3 %.
Cases and sources: tests/planner/engine/fixtures/vllm_startup_logs.json.
Run: .venv/bin/python bench/bench_memory_accuracy.py
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.engine.profiling import parse_version  # noqa: E402
from tests.planner.engine.startup_logs import CaseErrors, case_errors, cases  # noqa: E402

METRICS = ("weights", "kv_tokens", "max_concurrency")


def _mae(values: Iterable[float | None]) -> str:
    got = [abs(v) for v in values if v is not None]
    if not got:
        return "     -      "
    return f"{100 * sum(got) / len(got):5.2f}% ({len(got):2d})"


def table(
    rows: list[CaseErrors],
    title: str,
    key: Callable[[CaseErrors], str],
    order: Callable[[str], Any] = str,
) -> None:
    groups: dict[str, list[CaseErrors]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    width = max(len(title), *(len(name) for name in groups)) + 1
    print(
        f"\n{title:<{width}} {'weights MAE (n)':>15} {'KV tokens MAE (n)':>17}"
        f" {'max conc. MAE (n)':>17}"
    )
    for name in sorted(groups, key=order):
        group = groups[name]
        cells = [_mae(getattr(r, m) for r in group) for m in METRICS]
        print(f"{name:<{width}} {cells[0]:>15} {cells[1]:>17} {cells[2]:>17}")


def report(rows: list[CaseErrors], heading: str) -> None:
    """Print the MAE tables of `rows` by TP/PP, family, dtype and vLLM version."""
    print(f"\n===== {heading}: {len(rows)} cases =====")
    table(rows, "tensor parallel", lambda r: f"TP{r.case['tp']} PP{r.case['pp']}")
    table(rows, "family", lambda r: r.case["family"])
    table(
        rows,
        "weight dtype / KV dtype",
        lambda r: f"{r.case['weight_dtype']} / kv {r.case['kv_cache_dtype']}",
    )
    table(rows, "vLLM version", lambda r: r.case["vllm_version"], order=parse_version)


def main() -> None:
    rows = [case_errors(c) for c in cases()]
    table(rows, "all cases", lambda r: "all")
    table(rows, "split", lambda r: r.case["split"])
    report([r for r in rows if r.case["split"] == "validation"], "validation set")
    report(rows, "all cases")
    print("\nworst KV-token cases:")
    worst = sorted(
        (r for r in rows if r.kv_tokens is not None), key=lambda r: -abs(r.kv_tokens or 0)
    )
    for r in worst[:5]:
        print(f"  {r.case['id']:<52} {100 * (r.kv_tokens or 0):+6.2f}%  {r.case['source_url']}")


if __name__ == "__main__":
    main()
