"""Scrape limits benchmark: what a hostile 9 MB page of 150,000 label sets costs a poll.

Issue 15: such a page cost 7.5 CPU-seconds to parse, every interval. With the default limits
(sample_limit 50,000) the page is refused by the line scan before the Prometheus parser runs.
Printed: CPU time of `vllm.extract` on that page with the default limits (refused), of
`gpu.extract` on it (refused by the same scan before it splits a line), with the limits off (the
old cost), and on a normal recorded vLLM page with the limits on (the cost the
line scan adds to every poll). CPU time (process_time), best of 3.
Run: .venv/bin/python bench/bench_scrape_limits.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitoring.scrape import gpu, vllm  # noqa: E402
from monitoring.scrape.errors import LimitError  # noqa: E402
from monitoring.scrape.limits import ScrapeLimits, applied  # noqa: E402
from tests.monitoring.hostile import FIXTURES, HUGE_SERIES, huge_page  # noqa: E402


def cpu_s(
    text: str, limits: ScrapeLimits, runs: int = 3, extract: Callable[..., Any] = vllm.extract
) -> tuple[float, str]:
    best, outcome = float("inf"), ""
    for _ in range(runs):
        started = time.process_time()
        with applied(limits):
            try:
                extract(text, 0.0)
                outcome = "parsed"
            except LimitError as exc:
                outcome = f"refused: {exc}"
        best = min(best, time.process_time() - started)
    return best, outcome


def main() -> None:
    page = huge_page().decode()
    normal = (FIXTURES / "vllm" / "v0_32_metrics_after.txt").read_text()
    print(f"  hostile page: {len(page) / 1e6:.1f} MB, {HUGE_SERIES:,} label sets")
    limited, outcome = cpu_s(page, ScrapeLimits())
    print(f"  default limits: {limited * 1000:.0f} ms CPU ({outcome})")
    gpu_limited, outcome = cpu_s(page, ScrapeLimits(), extract=gpu.extract)
    print(f"  default limits, as a GPU exporter page: {gpu_limited * 1000:.0f} ms CPU ({outcome})")
    unlimited, outcome = cpu_s(page, ScrapeLimits(sample_limit=0), runs=1)
    print(f"  limits off:     {unlimited * 1000:.0f} ms CPU ({outcome})")
    with_limits, _ = cpu_s(normal, ScrapeLimits(), runs=20)
    without, _ = cpu_s(normal, ScrapeLimits(sample_limit=0, label_limit=0), runs=20)
    print(
        f"  normal vLLM page ({len(normal) / 1024:.0f} KB): {with_limits * 1000:.2f} ms CPU with"
        f" limits, {without * 1000:.2f} ms without"
    )


if __name__ == "__main__":
    main()
