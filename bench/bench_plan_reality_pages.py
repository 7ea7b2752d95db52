"""Plan vs reality on the pages that compute it: time and queries per request (no assertions).

An S1 plan with two linked replicas, each fed 6 h of 15 s polls of a simulated vLLM server
through the poller's own storage path, the first 5 h rolled up. Measures, per URL, the median
and p95 of 20 GETs and the queries one GET makes: the target page's panels (re-fetched every few
seconds while the page is open) at the 1 h and 6 h windows and at the plan scope, the plan page,
and the plan-comparison API.
Repeat: `/work/main/.venv/bin/python bench/bench_plan_reality_pages.py`
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_monitoring import p95_ms, run, viewer_client  # noqa: E402

POLLS = 6 * 3600 // 15
LOADS = 20


def body() -> None:
    from _planner_setup import planner_user
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from monitoring.services import target_create
    from monitoring.simulator.vllm_sim import VllmProfile
    from monitoring.stores.embedded.retention import rollup_run
    from planner.selectors.plan_values import plan_values
    from planner.services import plan_create
    from tests.monitoring.simulated import feed_simulated
    from tests.planner.conftest import S1_SPEC
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    plan = plan_create(spec={**S1_SPEC}, actor=planner_user())
    blocks = plan_values(plan).replica.kv_blocks
    targets = []
    for seed, name in enumerate(("s1-replica-a", "s1-replica-b"), start=1):
        target = target_create(
            name=name, kind="vllm", base_url=f"http://127.0.0.1:9/{name}", plan=plan
        )
        profile = VllmProfile(
            name=name,
            model="meta-llama/Llama-3.1-70B-Instruct",
            base_rps=3.0,
            num_gpu_blocks=blocks,
            mean_prompt_tokens=1024,
            mean_output_tokens=256,
            seed=seed,
        )
        feed_simulated(target, profile, polls=POLLS, step_s=15.0)
        targets.append(target)
    settings.MONITORING_ROLLUP_MAX_MINUTES_PER_RUN = 10_000
    settings.MONITORING_ROLLUP_MAX_ROWS_PER_RUN = 10**9
    rollup_run(now=timezone.now() - timedelta(hours=1))
    print(f"  2 replicas x {POLLS} polls (6 h of 15 s), rolled up to 1 h ago")
    client = viewer_client()
    panels = f"/monitoring/targets/{targets[0].pk}/panels/"
    urls = {
        "target panels, 1h": (panels, {"window": "1h"}),
        "target panels, 6h": (panels, {"window": "6h"}),
        "target panels, plan scope 6h": (panels, {"window": "6h", "scope": "plan"}),
        "plan page": (plan.get_absolute_url(), {}),
        "comparison API, 6h": (
            f"/api/v1/monitoring/targets/{targets[0].pk}/plan-comparison/",
            {"window": "6h"},
        ),
    }
    for name, (url, params) in urls.items():

        def get(url=url, params=params):
            response = client.get(url, params)
            assert response.status_code == 200, (url, response.status_code)

        queries = []

        def count(execute, sql, params, many, context, queries=queries):
            queries.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            get()
        median, p95 = p95_ms(get, rounds=LOADS)
        print(f"  {name}: median {median:.0f} ms, p95 {p95:.0f} ms, {len(queries)} queries")


if __name__ == "__main__":
    run(body)
