"""CPU time of plan vs reality's engine calls and of a calibration fit (issue 17).

- one replica's prediction at an observed concurrency: steady state (what calibration calls) and
  with the simulated p95s (what every plan-comparison page and API call makes per target);
- a calibration fit on 2 replicas × 7 concurrency levels of simulated S1 measurements, on the
  plan's 2 nodes and on a 1,000-node fleet.
Repeat: `/work/main/.venv/bin/python bench/bench_reality.py`
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS  # noqa: E402
from planner.engine.at_concurrency import ReplicaLayout, predict_replica  # noqa: E402
from planner.engine.calibration import (  # noqa: E402
    CalibrationFactors,
    Observation,
    calibrated,
    fit_calibration,
)
from planner.engine.spec import spec_from_dict  # noqa: E402

S1 = {
    "model": "llama-3.1-70b",
    "weight_dtype": "int8",
    "max_model_len": 8192,
    "workload": {"concurrency": 64, "avg_input_tokens": 1024, "avg_output_tokens": 512},
    "hardware": {
        "node_count": 2,
        "gpus_per_node": 8,
        "gpu": "a800-80g-sxm",
        "inter_node_gbps": 25,
        "inter_node_kind": "ethernet",
        "data_nic": "eth1",
    },
}
LAYOUT = ReplicaLayout(gpu="a800-80g-sxm", tp=8, pp=1, weight_dtype="int8")


def cpu_ms(call, repeats: int) -> float:
    call()
    samples = []
    for _ in range(repeats):
        c0 = time.process_time()
        call()
        samples.append((time.process_time() - c0) * 1e3)
    return statistics.median(samples)


def observations(spec) -> list[Observation]:
    truth = calibrated(
        DEFAULT_ASSUMPTIONS,
        CalibrationFactors(kv_overhead_gib=1.5, decode_efficiency=0.8, prefill_efficiency=1.25),
    )
    rng = random.Random(1)
    out = []
    for replica in range(2):
        for level in (1, 2, 4, 8, 16, 32, 64):
            p = predict_replica(spec, LAYOUT, concurrency_per_replica=level, a=truth)
            out.append(
                Observation(
                    source=f"r{replica}",
                    spec=spec,
                    layout=LAYOUT,
                    concurrency=level,
                    itl_ms=p.itl_ms * (1 + rng.gauss(0, 0.02)),
                    ttft_ms=p.ttft_ms * (1 + rng.gauss(0, 0.02)),
                    kv_blocks=p.kv_blocks,
                )
            )
    return out


def main() -> None:
    spec = spec_from_dict(S1)
    for level in (4, 32):
        mean = cpu_ms(lambda c=level: predict_replica(spec, LAYOUT, concurrency_per_replica=c), 9)
        p95 = cpu_ms(
            lambda c=level: predict_replica(
                spec, LAYOUT, concurrency_per_replica=c, percentiles=True
            ),
            5,
        )
        print(
            f"predict one replica at {level:>2} running: {mean:6.1f} ms steady state, "
            f"{p95:6.1f} ms with simulated p95s"
        )
    for nodes in (2, 1000):
        fleet = spec_from_dict({**S1, "hardware": {**S1["hardware"], "node_count": nodes}})
        obs = observations(fleet)
        fit = cpu_ms(lambda o=obs: fit_calibration(o), 3)
        print(f"calibration fit, {len(obs)} observations, {nodes:>4} nodes: {fit:6.0f} ms CPU")


if __name__ == "__main__":
    main()
