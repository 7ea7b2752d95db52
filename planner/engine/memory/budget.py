"""The KV budget of one replica: requested memory minus each term, stage by stage; the stage
with the least left decides (the formula is in the package's docstring)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from catalog.architecture import Architecture
from catalog.generations import pre_ampere
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.memory.activations import (
    activation_peak_bytes,
    default_batched_tokens,
    default_max_num_seqs,
)
from planner.engine.memory.kv import kv_layout
from planner.engine.memory.overheads import cuda_graph_count, cuda_graph_gib, non_torch_gib
from planner.engine.memory.weights import partition_layers, stage_weight_bytes
from planner.engine.messages import Code, Message, message
from planner.engine.mxfp4 import Mxfp4Kernel, mxfp4_kernel
from planner.engine.profiling import (
    GpuVendor,
    NativeSampler,
    ProfilingRules,
    parse_version,
    profiling_rules,
    v0_profile_tokens,
)
from planner.engine.vllm_flags import VLLM_VERSION


@dataclass(frozen=True, slots=True, kw_only=True)
class StageMemory:
    """Memory of one GPU of one pipeline stage, in bytes."""

    layers: int
    weights_bytes: float
    activation_bytes: float
    non_torch_bytes: float
    cuda_graph_bytes: float
    requested_bytes: float
    visible_bytes: float
    kv_budget_bytes: float
    kv_bytes_per_token: float
    blocks: int
    kv_tokens: int
    blocks_per_request: int
    kv_groups: int


def limiting_stage(stages: Sequence[StageMemory]) -> StageMemory:
    """Return the stage that holds the fewest max_model_len requests in its KV cache."""
    return min(stages, key=lambda s: s.blocks / max(1, s.blocks_per_request))


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryResult:
    stages: tuple[StageMemory, ...]
    kv_tokens: int
    blocks: int
    max_concurrency: float
    fits: bool
    reason: Message | None  # why it does not fit; None when it does
    rules: ProfilingRules
    profiled_seqs: int  # the max_num_seqs the start-up profile ran (set or the version's default)

    @property
    def worst(self) -> StageMemory:
        """Return the stage that limits the KV cache."""
        return limiting_stage(self.stages)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Profile:
    """What vLLM's profile run is measured at, and the rules of the version."""

    rules: ProfilingRules
    tokens: int  # max_num_batched_tokens of the profile's dummy batch
    seqs: int  # max_num_seqs: the sampler's batch and the CUDA-graph sizes
    subtract_graphs: bool
    flashinfer_sampler: bool
    a: Assumptions  # with the version's native-sampler logit copies


def _profile(
    rules: ProfilingRules,
    *,
    visible_gib: float,
    gpu_slug: str,
    max_model_len: int,
    max_num_batched_tokens: int | None,
    max_num_seqs: int | None,
    a: Assumptions,
) -> _Profile:
    """Return the batch limits of the profile run and the sampler and graph rules to apply."""
    tokens = max_num_batched_tokens or default_batched_tokens(
        visible_gib, gpu_slug, a, rules.version
    )
    seqs = max_num_seqs or default_max_num_seqs(visible_gib, gpu_slug, a, rules.version)
    if rules.full_length_prefill:
        tokens = v0_profile_tokens(max_model_len, max_num_batched_tokens)
    subtract = rules.subtract_cuda_graphs
    if a.subtract_cuda_graph_memory is not None:
        subtract = a.subtract_cuda_graph_memory
    flashinfer = rules.flashinfer_sampler if a.flashinfer_sampler is None else a.flashinfer_sampler
    native_copies = {
        NativeSampler.EARLY_V1: a.sampler_logit_copies_native_early,
        NativeSampler.FULL_SORT: a.sampler_logit_copies_native_full_sort,
        NativeSampler.LEAN: a.sampler_logit_copies_native,
    }[rules.native_sampler]
    return _Profile(
        rules=rules,
        tokens=tokens,
        seqs=seqs,
        subtract_graphs=subtract,
        flashinfer_sampler=flashinfer,
        a=replace(a, sampler_logit_copies_native=native_copies),
    )


def _stage_memory(
    arch: Architecture,
    profile: _Profile,
    *,
    stage: int,
    pp: int,
    start: int,
    layers: int,
    dtype: str,
    kv_cache_dtype: str,
    tp: int,
    max_model_len: int,
    requested: float,
    visible: float,
    non_torch: float,
    mxfp4: Mxfp4Kernel,
) -> StageMemory:
    """Return one pipeline stage's terms and the KV blocks its budget holds."""
    a, rules, tokens = profile.a, profile.rules, profile.tokens
    first, last = stage == 0, stage == pp - 1
    weights = stage_weight_bytes(
        arch,
        dtype,
        tp,
        start,
        layers,
        first=first,
        last=last,
        single_stage=pp == 1,
        a=a,
        mxfp4_kernel=mxfp4,
    )
    act_a = (
        a if rules.engine == "V1" else replace(a, activation_mlp_factor=a.v0_activation_mlp_factor)
    )
    act = activation_peak_bytes(
        arch,
        tp,
        tokens,
        profile.seqs,
        first_stage=first,
        last_stage=last,
        a=act_a,
        dtype=dtype,
        flashinfer_sampler=profile.flashinfer_sampler,
        sorting_sampler=rules.engine == "V1" or not profile.flashinfer_sampler,
    )
    graph_count = cuda_graph_count(profile.seqs, tokens)
    graphs = cuda_graph_gib(layers, a, graph_count) * GIB if profile.subtract_graphs else 0.0
    budget = requested - weights - act - non_torch - graphs
    block = a.block_size_tokens
    layout = kv_layout(arch, tp, start, layers, kv_cache_dtype, dtype)
    if layout.num_groups and budget > 0:
        blocks = math.floor(budget / (layout.bytes_per_block_token * block))
    else:
        blocks = 0
    return StageMemory(
        layers=layers,
        weights_bytes=weights,
        activation_bytes=act,
        non_torch_bytes=non_torch,
        cuda_graph_bytes=graphs,
        requested_bytes=requested,
        visible_bytes=visible,
        kv_budget_bytes=budget,
        kv_bytes_per_token=layout.bytes_per_token,
        blocks=blocks,
        kv_tokens=(blocks // max(1, layout.num_groups)) * block,
        blocks_per_request=layout.blocks_per_request(max_model_len, tokens, block),
        kv_groups=max(1, layout.num_groups),
    )


def _fit(stages: Sequence[StageMemory], max_model_len: int) -> tuple[bool, Message | None]:
    """Return whether the replica fits: a positive KV budget on every stage, and room for one
    request of the full context."""
    worst = limiting_stage(stages)
    kv_tokens = min(st.kv_tokens for st in stages)
    tightest = min(stages, key=lambda st: st.kv_budget_bytes)
    if tightest.kv_budget_bytes <= 0:
        return False, message(Code.REJECT_MEMORY_OVER, **memory_over(tightest))
    if worst.blocks / max(1, worst.blocks_per_request) < 1:
        return False, message(Code.REJECT_KV, kv_tokens=kv_tokens, max_model_len=max_model_len)
    return True, None


def memory_over(stage: StageMemory) -> dict[str, float]:
    """Return what fills a GPU that has no KV cache left: weights, overheads, memory requested."""
    overheads = stage.activation_bytes + stage.non_torch_bytes + stage.cuda_graph_bytes
    return {
        "weights_gib": round(stage.weights_bytes / GIB, 2),
        "overhead_gib": round(overheads / GIB, 2),
        "requested_gib": round(stage.requested_bytes / GIB, 2),
    }


@lru_cache(maxsize=1024)
def plan_memory(
    arch: Architecture,
    *,
    dtype: str,
    kv_cache_dtype: str,
    tp: int,
    pp: int,
    visible_gib: float,
    gpu_slug: str,
    utilization: float,
    max_model_len: int,
    max_num_batched_tokens: int | None,
    max_num_seqs: int | None,
    a: Assumptions,
    vllm_version: str = VLLM_VERSION,
    custom_all_reduce: bool = True,
    vendor: GpuVendor = GpuVendor.NVIDIA,
) -> MemoryResult:
    """Return the per-GPU memory budget of one replica and its KV capacity.

    `vendor` decides whether the version's CUDA-graph estimate applies (profiling.py).
    Cached: a plan evaluates the same layout for several node groups and replica counts.
    """
    rules = profiling_rules(vllm_version, vendor, moe=arch.is_moe, pre_ampere=pre_ampere(gpu_slug))
    profile = _profile(
        rules,
        visible_gib=visible_gib,
        gpu_slug=gpu_slug,
        max_model_len=max_model_len,
        max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs,
        a=a,
    )
    visible = visible_gib * GIB
    non_torch_per_gpu_gib = non_torch_gib(rules, tp, pp, custom_all_reduce=custom_all_reduce)
    mxfp4 = mxfp4_kernel(gpu_slug, vendor, parse_version(rules.version))
    stages: list[StageMemory] = []
    start = 0
    for stage, layers in enumerate(partition_layers(arch.num_layers, pp)):
        stages.append(
            _stage_memory(
                arch,
                profile,
                stage=stage,
                pp=pp,
                start=start,
                layers=layers,
                dtype=dtype,
                kv_cache_dtype=kv_cache_dtype,
                tp=tp,
                max_model_len=max_model_len,
                requested=visible * utilization,
                visible=visible,
                non_torch=(non_torch_per_gpu_gib + a.extra_non_torch_gib) * GIB,
                mxfp4=mxfp4,
            )
        )
        start += layers
    worst = limiting_stage(stages)
    fits, reason = _fit(stages, max_model_len)
    return MemoryResult(
        stages=tuple(stages),
        kv_tokens=min(st.kv_tokens for st in stages),
        blocks=worst.blocks,
        max_concurrency=worst.blocks / max(1, worst.blocks_per_request),
        fits=fits,
        reason=reason,
        rules=rules,
        profiled_seqs=profile.seqs,
    )
