"""The load generator against a fake OpenAI server on loopback (no Django, no database)."""

import asyncio

import pytest

from benchmarks.loadgen import Arrival, Endpoint, EndpointError, Outcome, Slo, Workload
from benchmarks.loadgen import run_benchmark as _run
from benchmarks.loadgen.metrics import summarize
from benchmarks.loadgen.results import RequestRecord
from benchmarks.loadgen.workload import send_times
from tests.benchmarks.fake_openai import FakeConfig, FakeServer, count_tokens


def run(url, levels, **kw):
    return asyncio.run(_run(Endpoint(base_url=url, **kw.pop("endpoint", {})), levels, **kw))


def test_closed_loop_counts_requests_and_tokens_exactly():
    with FakeServer() as server:
        result = run(server.url, [Workload(requests=6, input_tokens=40, output_tokens=5,
                                           concurrency=2)])  # fmt: skip
    level = result.levels[0]
    s = level.summary
    assert result.model == "fake/model"
    assert result.prompts_exact
    assert (s.completed, s.failed, s.cut_short) == (6, 0, 0)
    assert s.total_input_tokens == 6 * 40
    assert s.total_output_tokens == 6 * 5
    assert level.outcome == Outcome.COMPLETED
    # The prompts were built to 40 tokens by the server's own count.
    assert {count_tokens(b["prompt"]) for b in server.config.seen} == {40}
    assert all(b["stream"] and b["ignore_eos"] and b["max_tokens"] == 5 for b in server.config.seen)


def test_timings_follow_the_server():
    config = FakeConfig(ttft_s=0.05, itl_s=0.02)
    with FakeServer(config) as server:
        s = run(server.url, [Workload(requests=3, input_tokens=10, output_tokens=6)]).levels[0]
    summary = s.summary
    assert 45 <= summary.ttft.median_ms <= 120
    assert 18 <= summary.tpot.median_ms <= 40
    assert summary.itl.count == 3 * 5  # five gaps after the first of six chunks, per request
    # E2E = TTFT + 5 gaps, for every request.
    for r in s.records:
        assert r.latency_s == pytest.approx(r.ttft_s + sum(r.itl_s), abs=1e-9)


def test_bearer_token_is_sent():
    with FakeServer() as server:
        run(server.url, [Workload(requests=1, input_tokens=8, output_tokens=2)],
            endpoint={"bearer_token": "s3cret"})  # fmt: skip
    assert server.config.headers[0]["authorization"] == "Bearer s3cret"


def test_server_errors_are_counted_as_failed_not_dropped():
    with FakeServer(FakeConfig(status=400)) as server:
        level = run(server.url, [Workload(requests=3, input_tokens=8, output_tokens=2)]).levels[0]
    assert (level.summary.completed, level.summary.failed) == (0, 3)
    assert level.outcome == Outcome.COMPLETED  # a 4xx is the request's fault, not the server's
    assert level.errors
    assert "HTTP 400" in level.errors[0]


def test_a_server_that_stops_answering_breaks_the_run_off_with_partial_results():
    with FakeServer(FakeConfig(die_after=3)) as server:
        level = run(server.url, [Workload(requests=40, input_tokens=8, output_tokens=2)]).levels[0]
    s = level.summary
    assert level.outcome == Outcome.BROKEN_OFF
    assert s.completed == 3
    assert s.failed >= 8
    assert s.not_sent == 40 - s.sent > 0


def test_requests_stopped_early_are_counted_as_cut_short():
    with FakeServer(FakeConfig(stop_after_tokens=2)) as server:
        s = run(server.url, [Workload(requests=2, input_tokens=8, output_tokens=5)]).levels[0]
    assert (s.summary.completed, s.summary.cut_short, s.summary.total_output_tokens) == (2, 2, 4)


def test_without_usage_the_streamed_chunks_are_counted():
    with FakeServer(FakeConfig(usage=False, tokenize=False)) as server:
        result = run(server.url, [Workload(requests=2, input_tokens=8, output_tokens=4)])
    assert result.levels[0].summary.total_output_tokens == 8
    assert not result.prompts_exact


def test_cancel_from_the_hook_stops_and_counts_requests_in_flight():
    calls = []

    def hook(progress):
        calls.append(progress)
        return True  # stop at the first report

    with FakeServer(FakeConfig(itl_s=0.2)) as server:
        result = run(server.url, [Workload(requests=20, input_tokens=8, output_tokens=20,
                                           concurrency=4)],
                     hook=hook, progress_interval_s=0.05)  # fmt: skip
    level = result.levels[0]
    assert level.outcome == Outcome.CANCELLED
    assert calls
    assert calls[0].total == 20
    assert level.summary.sent == 4
    assert level.summary.failed == 4
    assert all("stopped in flight" in r.error for r in level.records)


def test_deadline_times_the_run_out():
    with FakeServer(FakeConfig(itl_s=0.2)) as server:
        result = run(server.url, [Workload(requests=5, input_tokens=8, output_tokens=50)],
                     max_duration_s=0.3, progress_interval_s=0.05)  # fmt: skip
    assert result.outcome == Outcome.TIMED_OUT


def test_sweep_runs_each_level_with_its_concurrency():
    with FakeServer() as server:
        result = run(server.url, [Workload(requests=4, input_tokens=8, output_tokens=2,
                                           concurrency=c) for c in (1, 4)])  # fmt: skip
    assert [lv.concurrency for lv in result.levels] == [1, 4]
    assert all(lv.summary.completed == 4 for lv in result.levels)


def test_unknown_model_is_refused_before_any_request():
    with FakeServer() as server, pytest.raises(EndpointError, match="does not serve"):
        run(server.url, [Workload(requests=1, input_tokens=8, output_tokens=2)],
            endpoint={"model": "other"})  # fmt: skip
    assert server.requests == 0


def test_poisson_arrivals_have_the_asked_mean_rate():
    times = send_times(Workload(requests=4000, input_tokens=1, output_tokens=1,
                                arrival=Arrival.POISSON, request_rate_rps=50.0))  # fmt: skip
    assert times[0] == 0.0
    assert 4000 / times[-1] == pytest.approx(50.0, rel=0.06)


def test_burst_has_no_cap_and_closed_loop_has_one():
    assert Workload(requests=9, input_tokens=1, output_tokens=1,
                    arrival=Arrival.BURST).in_flight_cap is None  # fmt: skip
    assert Workload(requests=9, input_tokens=1, output_tokens=1, concurrency=3).in_flight_cap == 3


def _record(i, ttft, latency, out, itl=()):
    return RequestRecord(index=i, success=True, ttft_s=ttft, latency_s=latency,
                         output_tokens=out, asked_output_tokens=out, prompt_tokens=10,
                         itl_s=list(itl))  # fmt: skip


def test_summary_matches_vllm_definitions():
    records = [
        _record(0, 0.1, 1.1, 11, [0.1] * 10),  # TPOT = 1.0 / 10 = 100 ms
        _record(1, 0.3, 0.3, 1),  # one token: no TPOT, TPOT 0 for goodput
        RequestRecord(index=2, error="HTTP 500"),
    ]
    s = summarize(records, requests=4, duration_s=2.0, slo=Slo(ttft_ms=200, tpot_ms=150))
    assert (s.completed, s.failed, s.not_sent) == (2, 1, 1)
    assert s.tpot.count == 1
    assert s.tpot.mean_ms == pytest.approx(100.0)
    assert s.ttft.median_ms == pytest.approx(200.0)  # numpy's median of 100 and 300
    assert s.ttft.p99_ms == pytest.approx(100 + 0.99 * 200)  # linear interpolation
    assert s.request_throughput_rps == pytest.approx(1.0)
    assert s.output_throughput_tok_s == pytest.approx(6.0)
    assert s.total_token_throughput_tok_s == pytest.approx(16.0)
    assert s.goodput_rps == pytest.approx(0.5)  # the second misses the 200 ms TTFT
    assert s.itl.count == 10


def test_summary_without_slo_has_no_goodput_and_empty_stats_are_zero():
    s = summarize([], requests=0, duration_s=0.0)
    assert s.goodput_rps is None
    assert s.ttft.mean_ms == 0.0
    assert s.ttft.count == 0


def _small_vocabulary(text: str) -> int:
    """A tokenizer that knows only single letters: every longer word is two tokens."""
    return sum(1 if len(w) == 1 else 2 for w in text.split())


def test_prompts_are_exact_with_a_small_vocabulary():
    with FakeServer(FakeConfig(count=_small_vocabulary)) as server:
        result = run(server.url, [Workload(requests=4, input_tokens=50, output_tokens=2)])
    assert result.prompts_exact
    assert result.levels[0].summary.total_input_tokens == 4 * 50
    assert {_small_vocabulary(b["prompt"]) for b in server.config.seen} == {50}


def test_in_flight_never_exceeds_the_cap():
    seen = []

    def hook(progress):
        seen.append(progress.in_flight)
        return False

    with FakeServer(FakeConfig(itl_s=0.01)) as server:
        run(server.url, [Workload(requests=30, input_tokens=8, output_tokens=10, concurrency=3)],
            hook=hook, progress_interval_s=0.01)  # fmt: skip
    assert max(seen) <= 3
    assert 3 in seen
