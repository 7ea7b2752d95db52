"""Which vLLM version's memory-profiling rules a plan followed, and the reasons that name them."""

from __future__ import annotations

from catalog.data import GpuVendor
from catalog.generations import pre_ampere
from planner.engine.assumptions import Assumptions
from planner.engine.memory import default_batched_tokens
from planner.engine.messages import Code, Message, message
from planner.engine.profiling import (
    CudaGraphRule,
    ProfilingRules,
    profiling_rules,
    v0_profile_tokens,
)
from planner.engine.result import Candidate, MemoryRules
from planner.engine.spec import GpuSpec, PlanSpec


def memory_rules_applied(
    vllm_version: str,
    vendor: GpuVendor = GpuVendor.NVIDIA,
    *,
    moe: bool = False,
    gpu_slug: str = "",
) -> MemoryRules:
    """Return which vLLM version's memory-profiling rules the plan followed on `vendor` GPUs
    (of `gpu_slug`: GPUs below compute capability 8.0 kept V0 longer)."""
    rules = profiling_rules(vllm_version, vendor, moe=moe, pre_ampere=pre_ampere(gpu_slug))
    return MemoryRules(
        vllm_version=rules.version,
        engine=rules.engine,
        cuda_graphs_subtracted=rules.subtract_cuda_graphs,
        full_length_prefill=rules.full_length_prefill,
        description=rules.description,
    )


def _rules(spec: PlanSpec, gpu: GpuSpec) -> ProfilingRules:
    return profiling_rules(
        spec.vllm_version,
        gpu.vendor,
        moe=spec.architecture.is_moe,
        pre_ampere=pre_ampere(gpu.slug),
    )


def cuda_graph_rule_message(spec: PlanSpec, best: Candidate) -> Message | None:
    """Return why vLLM subtracts no CUDA-graph estimate where 0.21 on would, else None."""
    gpu = next(n.gpu for n in spec.hardware.nodes if n.gpu.slug == best.gpu)
    rules = _rules(spec, gpu)
    if rules.cuda_graph_rule == CudaGraphRule.SKIPPED_PLATFORM:
        return message(
            Code.CUDA_GRAPHS_SKIPPED_PLATFORM, vllm_version=rules.version, vendor=str(gpu.vendor)
        )
    if rules.cuda_graph_rule == CudaGraphRule.RUNNER_V2_ZERO:
        return message(Code.CUDA_GRAPHS_RUNNER_V2, vllm_version=rules.version)
    return None


def memory_rules_message(spec: PlanSpec, best: Candidate, a: Assumptions) -> Message:
    """Return the reason that names the profiling rules behind the KV figures."""
    first = next(n for n in spec.hardware.nodes if n.gpu.slug == best.gpu)
    rules = _rules(spec, first.gpu)
    if rules.full_length_prefill:
        tokens = v0_profile_tokens(spec.max_model_len, spec.max_num_batched_tokens)
    else:
        tokens = spec.max_num_batched_tokens or default_batched_tokens(
            first.gpu.driver_visible_gib, first.gpu.slug, a, rules.version
        )
    return message(
        Code.MEMORY_RULES,
        vllm_version=rules.version,
        engine=rules.engine,
        cuda_graph_gib=round(best.memory.cuda_graph_gib, 2),
        non_torch_gib=round(best.memory.non_torch_gib, 2),
        profile_tokens=tokens,
    )
