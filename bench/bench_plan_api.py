"""What POST /api/v1/plans/evaluate/ adds to the engine (issue 4: ≤ 20 ms).

Times, in one process on a throw-away database with the demo fleet: the engine alone
(`plan(spec_from_dict(engine_input))`), the Django-side resolution of slugs and hostnames, and the
whole API request (session auth, JSON parsing, resolution, engine, JSON rendering).
Prints medians in ms. Run: .venv/bin/python bench/bench_plan_api.py [--runs 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from _planner_setup import percentile, planner_user, setup_demo_database, teardown_database

SPECS = {
    "S1 (hostnames)": {
        "model": "llama-3.1-70b",
        "weight_dtype": "int8",
        "max_model_len": 8192,
        "workload": {"concurrency": 32},
        "hardware": {"hostnames": ["a800-01", "a800-02"]},
    },
    "S2a (pool)": {
        "model": "qwen2.5-32b",
        "max_model_len": 8192,
        "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "hardware": {"pool": "a100-pool"},
    },
    "fleet (5 machines)": {
        "model": "qwen2.5-72b",
        "max_model_len": 32768,
        "workload": {"concurrency": 16},
        "hardware": {"fleet": True},
    },
}


def _ms(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    setup_demo_database("plan_api")

    from django.test import Client

    from planner.engine.plan import plan
    from planner.engine.spec import spec_from_dict
    from planner.services import resolve_spec

    client = Client()
    client.force_login(planner_user())
    print(f"runs per figure: {args.runs}")
    # What any signed-in API request costs here (session, auth, middleware, DRF): the floor.
    floor = statistics.median(_ms(lambda: client.get("/api/v1/"), args.runs))
    print(f"framework_floor_p50_ms (GET /api/v1/): {floor:.1f}")
    worst_overhead = 0.0
    for name, spec in SPECS.items():
        body = json.dumps(spec)
        first = client.post("/api/v1/plans/evaluate/", body, content_type="application/json")
        assert first.status_code == 200, first.content[:500]
        engine_input = resolve_spec(spec).engine_input
        # Interleaved, so that both figures of a pair see the same machine load.
        engine, resolve, api, added = [], [], [], []
        for _ in range(args.runs):
            e = _ms(lambda ei=engine_input: plan(spec_from_dict(ei)).to_dict(), 1)[0]
            r = _ms(lambda s=spec: resolve_spec(s), 1)[0]
            a = _ms(
                lambda b=body: client.post(
                    "/api/v1/plans/evaluate/", b, content_type="application/json"
                ),
                1,
            )[0]
            engine.append(e)
            resolve.append(r)
            api.append(a)
            added.append(a - e)
        overhead = statistics.median(added)
        worst_overhead = max(worst_overhead, overhead)
        print(
            f"{name}: engine_p50_ms={statistics.median(engine):.1f} "
            f"resolve_p50_ms={statistics.median(resolve):.1f} "
            f"api_p50_ms={statistics.median(api):.1f} api_p95_ms={percentile(api, 0.95):.1f} "
            f"api_adds_p50_ms={overhead:.1f} (of which framework floor {floor:.1f})"
        )
    print(f"api_adds_worst_p50_ms: {worst_overhead:.1f} (target <= 20)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load_average_1min: {load:.2f} on {os.cpu_count()} CPUs")
    teardown_database()


if __name__ == "__main__":
    main()
