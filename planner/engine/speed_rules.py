"""The reasons that say which vLLM engine a plan's speeds follow, when it is not V1."""

from __future__ import annotations

from planner.engine.assumptions import Assumptions
from planner.engine.messages import Code, Message, message
from planner.engine.result import Candidate
from planner.engine.serving.host import EngineEra, engine_era
from planner.engine.spec import PlanSpec


def speed_rules_messages(spec: PlanSpec, best: Candidate, a: Assumptions) -> list[Message]:
    """Return why a plan on the V0 engine (vLLM < 0.8; < 0.10.2 on GPUs below compute
    capability 8.0) is slower: its host work, its scheduler."""
    ctx = best.serving_context
    if ctx is None or ctx.era == EngineEra.V1:
        return []
    out: list[Message] = []
    if engine_era(spec.vllm_version) == EngineEra.V1:  # V0 because of the GPU, not the version
        out.append(message(Code.V0_ON_PRE_AMPERE, vllm_version=spec.vllm_version, gpu=best.gpu))
    out.append(
        message(
            Code.V0_ENGINE_HOST,
            vllm_version=spec.vllm_version,
            step_ms=round(ctx.step_overhead_ms, 1),
            per_seq_ms=round(ctx.per_seq_overhead_ms, 3),
            v1_per_seq_ms=round(a.decode_per_seq_overhead_ms, 3),
        )
    )
    if ctx.prefill_first:
        out.append(
            message(
                Code.V0_PROMPTS_FIRST,
                vllm_version=spec.vllm_version,
                max_num_batched_tokens=str(ctx.max_num_batched_tokens),
            )
        )
    return out
