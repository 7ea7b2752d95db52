"""The reasons a plan on an older vLLM or an older GPU carries: which vLLM engine its speeds
follow when it is not V1, and the fp16 a bf16 checkpoint is served in below Ampere."""

from __future__ import annotations

from catalog.generations import pre_ampere
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


def fp16_on_pre_ampere_message(spec: PlanSpec, best: Candidate) -> Message | None:
    """Return why a bf16 checkpoint's plan on a GPU below Ampere runs fp16 (the same condition
    as configs/vllm.serves_fp16_only, which adds --dtype half), or None."""
    if spec.architecture.default_dtype != "bf16" or not pre_ampere(best.gpu):
        return None
    return message(Code.FP16_ON_PRE_AMPERE, gpu=best.gpu)
