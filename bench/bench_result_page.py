"""Render time of a plan's result page (issue 5: p50 over 20 loads).

Saves DOMAIN.md S1 and S2a as plans on a throw-away database with the demo fleet, then GETs each
result page 20 times through Django's test client (full middleware, template rendering, chart
JSON). Prints p50/p95 in ms. Run: .venv/bin/python bench/bench_result_page.py [--loads 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _planner_setup import percentile, planner_user, setup_demo_database, teardown_database
from bench_plan_api import SPECS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loads", type=int, default=20)
    args = parser.parse_args()
    setup_demo_database("result_page")

    from django.test import Client

    from planner.selectors import plan_result
    from planner.services import plan_create

    user = planner_user()
    client = Client()
    client.force_login(user)
    print(f"loads per page: {args.loads}")
    for name, spec in SPECS.items():
        plan = plan_create(spec=spec, actor=user)
        url = plan.get_absolute_url()
        assert client.get(url).status_code == 200  # warm-up (template loading)
        times = []
        size = 0
        for _ in range(args.loads):
            t0 = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - t0) * 1000)
            size = len(response.content)
        print(
            f"{name}: result_page_p50_ms={statistics.median(times):.1f} "
            f"p95_ms={percentile(times, 0.95):.1f} html_kib={size / 1024:.0f} "
            f"candidates={len(plan_result(plan).candidates)}"
        )
    teardown_database()


if __name__ == "__main__":
    main()
