"""Typed results of a load benchmark: one record per request and the run's summary.

The definitions follow `vllm bench serve` (vllm/benchmarks/serve.py, calculate_metrics, and
lib/endpoint_request_func.py in vLLM 0.32) so that our figures can be set beside its own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    """How a run (or one sweep level) ended."""

    COMPLETED = "completed"  # every request was sent and answered (or failed on its own)
    CANCELLED = "cancelled"  # the caller asked it to stop
    BROKEN_OFF = "broken_off"  # the server stopped answering: the rest was not sent
    TIMED_OUT = "timed_out"  # the duration cap was reached


@dataclass(slots=True, kw_only=True)
class RequestRecord:
    """One request as the client saw it (seconds, relative to the level's start)."""

    index: int
    start_s: float = 0.0
    success: bool = False
    ttft_s: float = 0.0
    latency_s: float = 0.0  # to the last streamed token, as vLLM's client measures it
    itl_s: list[float] = field(default_factory=list)  # gaps between streamed chunks
    prompt_tokens: int = 0  # the server's usage figure, else the planned count
    output_tokens: int = 0  # the server's usage figure, else the chunks counted
    asked_output_tokens: int = 0
    finish_reason: str = ""
    error: str = ""

    @property
    def cut_short(self) -> bool:
        """Return True for a request that succeeded with fewer tokens than it asked for."""
        return self.success and self.output_tokens < self.asked_output_tokens

    @property
    def tpot_s(self) -> float | None:
        """Return (latency − TTFT) / (output tokens − 1), or None with one token or fewer."""
        if not self.success or self.output_tokens <= 1:
            return None
        return (self.latency_s - self.ttft_s) / (self.output_tokens - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyStats:
    """Mean, standard deviation, median and percentiles of one latency, in ms."""

    mean_ms: float
    std_ms: float
    median_ms: float
    p90_ms: float
    p95_ms: float
    p99_ms: float
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Slo:
    """Goodput thresholds in ms (`vllm bench serve --goodput ttft:… tpot:… e2el:…`)."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2el_ms: float | None = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.ttft_ms, self.tpot_ms, self.e2el_ms))


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """A level's figures, defined as `vllm bench serve` defines them."""

    requests: int  # asked for
    sent: int
    completed: int
    failed: int
    not_sent: int  # cancelled, broken off or out of time before they were sent
    cut_short: int  # completed with fewer output tokens than asked
    total_input_tokens: int
    total_output_tokens: int
    duration_s: float
    request_throughput_rps: float
    output_throughput_tok_s: float
    total_token_throughput_tok_s: float
    goodput_rps: float | None  # None without SLOs
    ttft: LatencyStats
    tpot: LatencyStats
    itl: LatencyStats
    e2el: LatencyStats
    mean_input_tokens: float
    mean_output_tokens: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelResult:
    """One level (a concurrency of the sweep, or the only one) with its requests."""

    concurrency: int | None
    request_rate_rps: float | None
    outcome: Outcome
    summary: Summary
    records: tuple[RequestRecord, ...]
    errors: tuple[str, ...]  # the first distinct error messages, for the page

    def as_dict(self, *, with_records: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "concurrency": self.concurrency,
            "request_rate_rps": self.request_rate_rps,
            "outcome": str(self.outcome),
            "summary": self.summary.as_dict(),
            "errors": list(self.errors),
        }
        if with_records:
            out["records"] = [record_dict(r) for r in self.records]
        return out


def record_dict(r: RequestRecord) -> dict[str, Any]:
    """Return a record as stored: seconds rounded to the microsecond, ITLs kept."""
    return {
        "index": r.index,
        "start_s": round(r.start_s, 6),
        "success": r.success,
        "ttft_s": round(r.ttft_s, 6),
        "latency_s": round(r.latency_s, 6),
        "itl_s": [round(x, 6) for x in r.itl_s],
        "prompt_tokens": r.prompt_tokens,
        "output_tokens": r.output_tokens,
        "asked_output_tokens": r.asked_output_tokens,
        "finish_reason": r.finish_reason,
        "error": r.error,
    }


def record_from_dict(d: dict[str, Any]) -> RequestRecord:
    return RequestRecord(
        index=int(d["index"]),
        start_s=float(d["start_s"]),
        success=bool(d["success"]),
        ttft_s=float(d["ttft_s"]),
        latency_s=float(d["latency_s"]),
        itl_s=[float(x) for x in d.get("itl_s", [])],
        prompt_tokens=int(d["prompt_tokens"]),
        output_tokens=int(d["output_tokens"]),
        asked_output_tokens=int(d["asked_output_tokens"]),
        finish_reason=str(d.get("finish_reason", "")),
        error=str(d.get("error", "")),
    )
