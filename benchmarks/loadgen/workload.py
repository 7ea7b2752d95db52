"""What a benchmark sends: request count, lengths and their spread, shared prefix, arrival."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from enum import StrEnum

from benchmarks.loadgen.results import Slo


class Arrival(StrEnum):
    """How requests arrive (the names the planner's workload uses)."""

    CLOSED = "closed"  # a closed loop: `concurrency` requests in flight, the next when one ends
    POISSON = "poisson"  # exponential gaps at `request_rate_rps`, optionally capped in flight
    BURST = "burst"  # every request at once (vLLM's --request-rate inf without a cap)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """One level of a benchmark. Lengths are tokens; spreads are standard deviations."""

    requests: int
    input_tokens: int
    output_tokens: int
    input_tokens_sd: float = 0.0
    output_tokens_sd: float = 0.0
    shared_prefix_fraction: float = 0.0  # share of every prompt that is one common prefix
    arrival: Arrival = Arrival.CLOSED
    concurrency: int | None = 1  # closed loop: in flight; Poisson: the cap (None: none)
    request_rate_rps: float | None = None  # Poisson only
    slo: Slo = field(default_factory=Slo)
    ignore_eos: bool = True  # the asked output length exactly, as `vllm bench serve` random
    request_timeout_s: float = 600.0
    seed: int = 0

    @property
    def in_flight_cap(self) -> int | None:
        """Return the most requests allowed in flight (None: no cap)."""
        if self.arrival == Arrival.BURST:
            return None
        if self.arrival == Arrival.CLOSED:
            return max(1, self.concurrency or 1)
        return self.concurrency


def _length(rng: random.Random, mean: int, sd: float, limit: int) -> int:
    if sd <= 0:
        return max(1, min(mean, limit))
    return max(1, min(round(rng.gauss(mean, sd)), limit))


def request_lengths(w: Workload, *, max_input: int | None = None) -> list[tuple[int, int]]:
    """Return (input tokens, output tokens) of every request, reproducible from the seed."""
    rng = random.Random(w.seed)
    cap_in = max_input or 10 * w.input_tokens + 1
    return [
        (
            _length(rng, w.input_tokens, w.input_tokens_sd, cap_in),
            _length(rng, w.output_tokens, w.output_tokens_sd, 10 * w.output_tokens + 1),
        )
        for _ in range(w.requests)
    ]


def send_times(w: Workload) -> list[float]:
    """Return when each request may be sent, seconds after the start (0 for all but Poisson)."""
    if w.arrival != Arrival.POISSON or not w.request_rate_rps or math.isinf(w.request_rate_rps):
        return [0.0] * w.requests
    rng = random.Random(w.seed + 1)
    t, out = 0.0, []
    for _ in range(w.requests):
        out.append(t)
        t += rng.expovariate(w.request_rate_rps)
    return out
