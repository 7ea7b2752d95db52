"""The summary of a level, computed exactly as `vllm bench serve` computes it.

From vLLM 0.32's `calculate_metrics` (vllm/benchmarks/serve.py):
- only successful requests enter the latencies and token counts; failed ones are counted apart;
- TPOT = (latency − TTFT) / (output tokens − 1), only for requests with more than one token;
- ITL values are the gaps between streamed chunks, pooled over every request;
- duration runs from the level's start to its last request's end; request throughput is
  completed / duration, output throughput output tokens / duration, total adds input tokens;
- goodput counts the completed requests that meet every given SLO (a request with one token has
  TPOT 0 for this test), per second;
- statistics are numpy's mean, std, median and linear-interpolated percentiles; an empty list
  gives 0, as there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchmarks.loadgen.results import LatencyStats, RequestRecord, Slo, Summary

PERCENTILES = (90.0, 95.0, 99.0)


def latency_stats(values_s: Sequence[float]) -> LatencyStats:
    """Return the statistics of latencies given in seconds, in ms (zeros when empty)."""
    data = np.asarray(values_s if len(values_s) else [0.0], dtype=float) * 1000.0
    p90, p95, p99 = (float(x) for x in np.percentile(data, PERCENTILES))
    return LatencyStats(
        mean_ms=float(np.mean(data)),
        std_ms=float(np.std(data)),
        median_ms=float(np.median(data)),
        p90_ms=p90,
        p95_ms=p95,
        p99_ms=p99,
        count=len(values_s),
    )


def _is_good(r: RequestRecord, slo: Slo) -> bool:
    tpot = r.tpot_s or 0.0
    checks = ((slo.ttft_ms, r.ttft_s), (slo.tpot_ms, tpot), (slo.e2el_ms, r.latency_s))
    return all(limit is None or value <= limit / 1000.0 for limit, value in checks)


def summarize(
    records: Sequence[RequestRecord],
    *,
    requests: int,
    duration_s: float,
    slo: Slo | None = None,
) -> Summary:
    """Return the level's figures from its request records (sent ones only)."""
    done = [r for r in records if r.success]
    ttfts = [r.ttft_s for r in done]
    tpots = [t for r in done if (t := r.tpot_s) is not None]
    itls = [gap for r in done for gap in r.itl_s]
    e2els = [r.latency_s for r in done]
    total_in = sum(r.prompt_tokens for r in done)
    total_out = sum(r.output_tokens for r in done)
    seconds = duration_s if duration_s > 0 else float("inf")
    goodput = None
    if slo is not None and slo.any:
        goodput = sum(1 for r in done if _is_good(r, slo)) / seconds
    return Summary(
        requests=requests,
        sent=len(records),
        completed=len(done),
        failed=len(records) - len(done),
        not_sent=max(0, requests - len(records)),
        cut_short=sum(1 for r in done if r.cut_short),
        total_input_tokens=total_in,
        total_output_tokens=total_out,
        duration_s=duration_s,
        request_throughput_rps=len(done) / seconds,
        output_throughput_tok_s=total_out / seconds,
        total_token_throughput_tok_s=(total_in + total_out) / seconds,
        goodput_rps=goodput,
        ttft=latency_stats(ttfts),
        tpot=latency_stats(tpots),
        itl=latency_stats(itls),
        e2el=latency_stats(e2els),
        mean_input_tokens=total_in / len(done) if done else 0.0,
        mean_output_tokens=total_out / len(done) if done else 0.0,
    )
