"""ServePlan's benchmark against `vllm bench serve` on the same real vLLM CPU server.

Two checks:
- The definitions, exactly: the per-request timings of a ServePlan run go through vLLM's own
  `calculate_metrics` (vllm/benchmarks/serve.py, in the vLLM CPU venv); every figure, goodput
  included, must equal ServePlan's to 1e-6.
- The same workload, live: both tools send the same 16 prompts (ServePlan's, handed to vLLM's
  tool as its samples) with 16 output tokens each, ignoring EOS, two in flight. Request and
  token counts must be equal. Latency tolerance: on this 2-core machine, shared with other
  work, a tiny model's prefill and steps take a few milliseconds and a descheduled process adds
  tens; runs seconds apart differed by up to 3x in TTFT either way. When vLLM's API process lags
  its engine it merges several tokens into one streamed chunk, so TPOT (time after the first
  chunk) swung between 0.02 and 27 ms from one run to the next, for both tools alike. So the
  medians must agree within a factor of 2 plus 50 ms (TTFT, E2E) and a factor of 2 plus 30 ms
  (TPOT): bounds that catch a unit or definition error (ms for s, TPOT over all tokens), not
  one of precision, which the first check covers exactly.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from io import StringIO

import httpx
import pytest
from django.core.management import call_command

from benchmarks import services
from benchmarks.loadgen import Endpoint, Slo, Workload, run_benchmark
from benchmarks.loadgen.benchmark import make_client, token_counter
from benchmarks.loadgen.metrics import summarize
from benchmarks.loadgen.prompts import build_prompts
from benchmarks.loadgen.workload import request_lengths
from benchmarks.models import BenchmarkRun
from monitoring.services import target_create

pytestmark = [pytest.mark.vllm, pytest.mark.enable_socket, pytest.mark.django_db(transaction=True)]

WORKLOAD = {"requests": 16, "input_tokens": 64, "output_tokens": 16, "concurrency": [2]}
TTFT_TOLERANCE = (2.0, 50.0)  # factor, then ms added: |ours - theirs| <= (f - 1) * min + ms
TPOT_TOLERANCE = (2.0, 30.0)
E2E_TOLERANCE = (2.0, 50.0)
PERCENTILES = (50.0, 90.0, 95.0, 99.0)

# vLLM's own `serve` benchmark, fed ServePlan's prompts: its `custom` dataset needs pandas, which
# the vLLM CPU venv lacks, so get_samples is replaced by the same SampleRequests it would build.
VLLM_BENCH = """
import argparse, json, sys
import vllm.benchmarks.serve as serve
from vllm.benchmarks.datasets import SampleRequest
parser = argparse.ArgumentParser()
serve.add_cli_args(parser)
args = parser.parse_args(sys.argv[2:])
rows = [json.loads(line) for line in open(sys.argv[1])]
serve.get_samples = lambda args, tokenizer: [
    SampleRequest(prompt=r["prompt"], prompt_len=r["prompt_len"],
                  expected_output_len=r["output_tokens"]) for r in rows]
serve.main(args)
"""
# vLLM's calculate_metrics over ServePlan's per-request timings (a JSON document on stdin).
VLLM_METRICS = """
import dataclasses, json, sys
from vllm.benchmarks.datasets import SampleRequest
from vllm.benchmarks.lib.endpoint_request_func import RequestFuncOutput
from vllm.benchmarks.serve import calculate_metrics
run = json.load(sys.stdin)
outputs, inputs = [], []
for r in run["records"]:
    out = RequestFuncOutput()
    out.success, out.latency, out.ttft = r["success"], r["latency_s"], r["ttft_s"]
    out.itl, out.output_tokens, out.prompt_len = r["itl_s"], r["output_tokens"], r["prompt_tokens"]
    out.start_time = r["start_s"]
    outputs.append(out)
    inputs.append(SampleRequest(prompt="", prompt_len=r["prompt_tokens"],
                                expected_output_len=r["asked_output_tokens"]))
metrics, _ = calculate_metrics(inputs, outputs, run["duration_s"], None, run["percentiles"],
                               run["goodput"])
print(json.dumps(dataclasses.asdict(metrics)))
"""


def _serveplan_prompts(url: str) -> list[str]:
    """Return the prompts ServePlan sends for WORKLOAD (same code and seed, the server's counts)."""
    from benchmarks.config import parse_config

    workload = parse_config(WORKLOAD).workloads()[0]

    async def build() -> list[str]:
        tls = httpx.create_ssl_context()
        async with make_client(Endpoint(base_url=url), timeout_s=60, tls=tls) as client:
            counter = await token_counter(client, "tiny-llama")
            lengths = [n for n, _ in request_lengths(workload, max_input=512)]
            prompts = await build_prompts(lengths, count=counter, seed=workload.seed)
            assert prompts.exact
            return list(prompts.prompts)

    return asyncio.run(build())


def _vllm_bench(tiny_vllm, prompts: list[str], tmp_path) -> dict:
    dataset = tmp_path / "prompts.jsonl"
    dataset.write_text("".join(json.dumps({"prompt": p, "prompt_len": 64, "output_tokens": 16})
                               + "\n" for p in prompts))  # fmt: skip
    done = subprocess.run(
        [tiny_vllm.python, "-c", VLLM_BENCH, str(dataset),
         "--backend", "openai", "--base-url", tiny_vllm.url, "--endpoint", "/v1/completions",
         "--model", str(tiny_vllm.model_dir), "--served-model-name", "tiny-llama",
         "--num-prompts", str(len(prompts)),
         "--max-concurrency", "2", "--request-rate", "inf", "--ignore-eos",
         "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,95,99",
         "--save-result", "--result-dir", str(tmp_path), "--result-filename", "vllm.json"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((tmp_path / "vllm.json").read_text())


def _close(ours: float, theirs: float, tolerance: tuple[float, float]) -> bool:
    factor, absolute = tolerance
    return abs(ours - theirs) <= (factor - 1) * min(ours, theirs) + absolute


def test_the_metric_definitions_equal_vllms_calculate_metrics(tiny_vllm):
    workload = Workload(requests=12, input_tokens=48, output_tokens=12, concurrency=3)
    level = asyncio.run(run_benchmark(Endpoint(base_url=tiny_vllm.url), [workload])).levels[0]
    # SLOs at the run's own medians, so that goodput counts some requests and not others.
    first = level.summary
    slo = Slo(ttft_ms=first.ttft.median_ms, tpot_ms=first.tpot.p90_ms)
    s = summarize(level.records, requests=12, duration_s=first.duration_s, slo=slo)
    document = {
        "records": [
            {"success": r.success, "latency_s": r.latency_s, "ttft_s": r.ttft_s,
             "itl_s": r.itl_s, "output_tokens": r.output_tokens,
             "prompt_tokens": r.prompt_tokens, "start_s": r.start_s,
             "asked_output_tokens": r.asked_output_tokens}
            for r in level.records
        ],
        "duration_s": s.duration_s,
        "percentiles": list(PERCENTILES),
        "goodput": {"ttft": slo.ttft_ms, "tpot": slo.tpot_ms},
    }  # fmt: skip
    done = subprocess.run([tiny_vllm.python, "-c", VLLM_METRICS], input=json.dumps(document),
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    pairs = {
        "completed": (s.completed, theirs["completed"]),
        "failed": (s.failed, theirs["failed"]),
        "total_input": (s.total_input_tokens, theirs["total_input"]),
        "total_output": (s.total_output_tokens, theirs["total_output"]),
        "request_throughput": (s.request_throughput_rps, theirs["request_throughput"]),
        "request_goodput": (s.goodput_rps, theirs["request_goodput"]),
        "output_throughput": (s.output_throughput_tok_s, theirs["output_throughput"]),
        "total_token_throughput": (s.total_token_throughput_tok_s,
                                   theirs["total_token_throughput"]),
    }  # fmt: skip
    for name, stats in (("ttft", s.ttft), ("tpot", s.tpot), ("itl", s.itl), ("e2el", s.e2el)):
        pairs[f"mean_{name}_ms"] = (stats.mean_ms, theirs[f"mean_{name}_ms"])
        pairs[f"median_{name}_ms"] = (stats.median_ms, theirs[f"median_{name}_ms"])
        pairs[f"std_{name}_ms"] = (stats.std_ms, theirs[f"std_{name}_ms"])
        percentiles = dict(theirs[f"percentiles_{name}_ms"])
        for p, ours in ((90.0, stats.p90_ms), (95.0, stats.p95_ms), (99.0, stats.p99_ms)):
            pairs[f"p{p:g}_{name}_ms"] = (ours, percentiles[p])
    different = {k: v for k, v in pairs.items() if v[0] != pytest.approx(v[1], rel=1e-6)}
    assert different == {}
    assert s.completed == 12
    assert 0 < s.goodput_rps < s.request_throughput_rps


# Live timings on this shared 2-core machine swing (see the module's docstring): in CI runs
# vLLM's API process merged all 16 tokens of ServePlan's requests into one chunk (TTFT = E2E =
# 71-114 ms, TPOT 0.02 ms) in three attempts running, while `vllm bench serve`, seconds later,
# saw them one by one (TTFT 10-16 ms). A merged stream's TTFT is the time of its last token, so
# it is held to the other tool's E2E (_first_tokens). A unit or definition error shows in every
# attempt; a descheduled process does not, so up to 3 attempts are run and one must agree on
# every median.
LIVE_ATTEMPTS = 3


def _live_medians(tiny_vllm, planner_api, target, tmp_path) -> dict[str, tuple[float, ...]]:
    """Run the workload through the API, `vllm bench serve` and `manage.py bench`; check the
    counts and return each tool's (TTFT, TPOT, E2E) medians."""
    created = planner_api.post("/api/v1/benchmarks/", {"target": target.pk, **WORKLOAD},
                               format="json")  # fmt: skip
    assert created.status_code == 201, created.content
    run = BenchmarkRun.objects.get(public_id=created.json()["public_id"])
    services.run_execute(run_id=run.pk)  # what the benchmarks worker runs
    detail = planner_api.get(f"/api/v1/benchmarks/{run.public_id}/").json()
    api_summary = detail["results"]["levels"][0]["summary"]

    vllm = _vllm_bench(tiny_vllm, _serveplan_prompts(tiny_vllm.url), tmp_path)

    out = StringIO()
    call_command("bench", "tiny", "--requests", "16", "--concurrency", "2", "--input-tokens",
                 "64", "--output-tokens", "16", "--format", "json", stdout=out)  # fmt: skip
    command_summary = json.loads(out.getvalue())["results"]["levels"][0]["summary"]

    seen = {"vllm": (vllm["median_ttft_ms"], vllm["median_tpot_ms"], vllm["median_e2el_ms"])}
    for name, summary in (("api", api_summary), ("command", command_summary)):
        seen[name] = tuple(summary[k]["median_ms"] for k in ("ttft", "tpot", "e2el"))
        assert summary["completed"] == vllm["completed"] == 16
        assert summary["failed"] == vllm["failed"] == 0
        assert summary["total_input_tokens"] == vllm["total_input_tokens"] == 16 * 64
        assert summary["total_output_tokens"] == vllm["total_output_tokens"] == 16 * 16
    return seen


# A median TPOT under this means a tool saw its streams' tokens arrive together: a step of the
# tiny model on this CPU takes milliseconds, so no two tokens streamed apart come this close.
MERGED_TPOT_MS = 0.5


def _merged(medians: tuple[float, ...]) -> bool:
    return medians[1] < MERGED_TPOT_MS


def _first_tokens(ours: tuple[float, ...], theirs: tuple[float, ...]) -> tuple[float, float]:
    """Return the two TTFTs to compare. A merged stream shows its first token with its last, so
    its TTFT is compared with the other tool's E2E when only one of the two was merged."""
    if _merged(ours) and not _merged(theirs):
        return ours[0], theirs[2]
    if _merged(theirs) and not _merged(ours):
        return ours[2], theirs[0]
    return ours[0], theirs[0]


def _agree(seen: dict[str, tuple[float, ...]]) -> bool:
    theirs = seen["vllm"]
    return all(
        _close(*_first_tokens(seen[name], theirs), TTFT_TOLERANCE)
        and _close(seen[name][1], theirs[1], TPOT_TOLERANCE)
        and _close(seen[name][2], theirs[2], E2E_TOLERANCE)
        for name in ("api", "command")
    )


def test_the_api_and_manage_py_bench_agree_with_vllm_bench_serve(tiny_vllm, planner_api, tmp_path):
    target = target_create(name="tiny", kind="vllm", base_url=tiny_vllm.url)
    # Warm the server up (its first requests pay for lazy initialisation), untimed.
    call_command("bench", "tiny", "--requests", "4", "--concurrency", "2", "--input-tokens",
                 "64", "--output-tokens", "16", stdout=StringIO())  # fmt: skip
    attempts = []
    for attempt in range(LIVE_ATTEMPTS):
        workdir = tmp_path / f"attempt-{attempt}"
        workdir.mkdir()
        attempts.append(_live_medians(tiny_vllm, planner_api, target, workdir))
        if _agree(attempts[-1]):
            break
    assert _agree(attempts[-1]), attempts


def test_a_merged_stream_is_held_to_the_other_tools_e2e():
    # The medians of a failed CI attempt: ServePlan's API run saw all tokens in one chunk.
    vllm, command = (10.13, 2.49, 47.55), (27.31, 1.07, 45.86)
    assert _agree({"vllm": vllm, "api": (70.87, 0.019, 71.20), "command": command})
    # A merged stream still may not end later than twice the other's E2E plus the margin,
    assert not _agree({"vllm": vllm, "api": (160.0, 0.019, 160.2), "command": command})
    # and a unit error (µs for ms) fails whether merged or not.
    assert not _agree({"vllm": vllm, "api": (70870.0, 19.0, 71200.0), "command": command})
    assert not _agree({"vllm": vllm, "api": (27310.0, 1070.0, 45860.0), "command": command})
