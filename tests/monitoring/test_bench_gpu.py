"""bench/bench_gpu.py refuses a Celery round too short to measure anything, naming the variable
(it printed a negative window and a share of polls due that meant nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench_gpu(monkeypatch):
    monkeypatch.delenv("BENCH_CELERY_S", raising=False)
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import bench_gpu

    return bench_gpu


@pytest.mark.parametrize("value", ["30", "37", "-5", "nan", "abc", ""])
def test_a_run_without_a_window_after_the_warm_up_is_refused(bench_gpu, value):
    with pytest.raises(SystemExit, match="BENCH_CELERY_S="):
        bench_gpu.celery_run_s(value)


def test_a_run_longer_than_the_warm_up_is_taken(bench_gpu):
    assert bench_gpu.CELERY_S == 100.0  # the default
    assert bench_gpu.celery_run_s("37.5") == 37.5


def test_the_script_stops_before_any_work_with_the_reason():
    env = {**os.environ, "BENCH_CELERY_S": "30"}
    done = subprocess.run(
        [sys.executable, "bench/bench_gpu.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # no database, simulator or round was started
    assert "BENCH_CELERY_S=30 is too short" in done.stderr
    assert "35 s are its warm-up" in done.stderr
