"""A load generator for OpenAI-compatible servers with `vllm bench serve`'s metric definitions.

Pure Python on asyncio and httpx (no Django): the Celery task, `manage.py bench` and bench/ run
it. `run_benchmark(Endpoint(...), [Workload(...), ...])` returns typed results.
"""

from benchmarks.loadgen.benchmark import BenchmarkResult, Endpoint, EndpointError, run_benchmark
from benchmarks.loadgen.results import LatencyStats, LevelResult, Outcome, RequestRecord, Slo
from benchmarks.loadgen.runner import Progress
from benchmarks.loadgen.workload import Arrival, Workload

__all__ = [
    "Arrival",
    "BenchmarkResult",
    "Endpoint",
    "EndpointError",
    "LatencyStats",
    "LevelResult",
    "Outcome",
    "Progress",
    "RequestRecord",
    "Slo",
    "Workload",
    "run_benchmark",
]
