"""The one speed figure shown for a layout: the serving model's prediction.

The engine ranks layouts on a closed-form steady state (`Candidate.output_throughput_tok_s`,
`ttft_ms`, `itl_ms`); the serving model then simulates the layouts a reader sees named. Every
message, page and export shows the simulated p50 figures; the closed-form ones stand in only
for a layout that was never simulated (a snapshot saved before the serving model existed).
"""

from __future__ import annotations

from planner.engine.result import Candidate


def shown_tok_s(c: Candidate) -> float | None:
    """Return the output tokens/s shown for `c` (all replicas together; None: no speed, it
    does not fit)."""
    return c.serving.output_tok_s if c.serving is not None else c.output_throughput_tok_s


def shown_ttft_ms(c: Candidate) -> float | None:
    """Return the time to first token shown for `c` (the simulated median)."""
    return c.serving.ttft_p50_ms if c.serving is not None else c.ttft_ms


def shown_tpot_ms(c: Candidate) -> float | None:
    """Return the time per output token shown for `c` (the simulated median)."""
    return c.serving.tpot_p50_ms if c.serving is not None else c.itl_ms
