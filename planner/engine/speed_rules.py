"""The reasons that say which vLLM engine a plan's speeds follow, when it is not V1."""

from __future__ import annotations

from planner.engine.assumptions import Assumptions
from planner.engine.messages import Code, Message, message
from planner.engine.result import Candidate
from planner.engine.serving.host import EngineEra, engine_era
from planner.engine.spec import PlanSpec


def speed_rules_messages(spec: PlanSpec, best: Candidate, a: Assumptions) -> list[Message]:
    """Return why a plan for a V0 version (vLLM < 0.8) is slower: its host work, its scheduler."""
    ctx = best.serving_context
    if engine_era(spec.vllm_version) == EngineEra.V1 or ctx is None:
        return []
    out = [
        message(
            Code.V0_ENGINE_HOST,
            vllm_version=spec.vllm_version,
            step_ms=round(ctx.step_overhead_ms, 1),
            per_seq_ms=round(ctx.per_seq_overhead_ms, 3),
            v1_per_seq_ms=round(a.decode_per_seq_overhead_ms, 3),
        )
    ]
    if ctx.prefill_first:
        out.append(
            message(
                Code.V0_PROMPTS_FIRST,
                vllm_version=spec.vllm_version,
                max_num_batched_tokens=str(ctx.max_num_batched_tokens),
            )
        )
    return out
