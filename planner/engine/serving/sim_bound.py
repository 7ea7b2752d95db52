"""How much of a load one serving simulation covers, so that no plan costs more than about half
a second of CPU (issue 33): the requests simulated and the engine steps run, decided before the
simulation starts (bench/bench_plan_cost.py measures the worst workload the forms accept)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.engine.serving.context import ServingContext

MAX_STEPS = 200_000
# Passes through the scheduler's hot loop one simulation may make (one per running request and
# step): about 0.4 µs each, so about half a second of CPU (bench/bench_plan_cost.py measures
# the worst workload the forms and the API accept).
MAX_REQUEST_STEPS = 1_200_000
# What one step costs besides its requests' passes (scheduling, timing and advancing it),
# counted in passes (about 6 µs on a loaded 2-core machine).
STEP_PASSES = 16


def blocks_for(ctx: ServingContext, tokens: float) -> int:
    """Return the KV blocks `tokens` take."""
    return math.ceil(tokens / ctx.block_size)


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationBound:
    """How much of a load one simulation covers: its first `requests`, at most `max_steps`."""

    requests: int
    max_steps: int


def simulation_bound(
    ctx: ServingContext,
    *,
    requests: int,
    input_tokens: float,
    output_tokens: float,
    closed_concurrency: int | None,
) -> SimulationBound:
    """Return how many of `requests` to simulate, and for how many steps, within the budget.

    `input_tokens` and `output_tokens` are a request's lengths, from above (a spread makes the
    long ones cost more than the short ones save). Each request passes through the hot loop once
    per step it runs: its output tokens plus its prompt's chunks; each step also costs about
    STEP_PASSES passes of its own (timing it). The requests are capped so that their passes fit
    MAX_REQUEST_STEPS, and the steps so that the batch the KV cache and the limits allow cannot
    take more than twice that (preemptions repeat prefills). Ordinary loads are far below both.
    """
    steps_per_request = max(1, math.ceil(output_tokens)) + math.ceil(
        max(input_tokens, 1) / max(ctx.max_num_batched_tokens, 1)
    )
    simulated = max(1, min(requests, MAX_REQUEST_STEPS // steps_per_request))
    resident_blocks = blocks_for(ctx, input_tokens + output_tokens / 2) or 1
    running = max(
        1,
        min(
            simulated,
            closed_concurrency or simulated,
            ctx.max_num_seqs,
            ctx.kv_blocks // resident_blocks,
        ),
    )
    budget_steps = 2 * MAX_REQUEST_STEPS // (running + STEP_PASSES)
    max_steps = min(MAX_STEPS, max(steps_per_request, budget_steps))
    return SimulationBound(requests=simulated, max_steps=max_steps)
