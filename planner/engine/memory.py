"""Per-GPU memory the way vLLM V1 budgets it (gpu_worker.determine_available_memory).

requested = driver-visible memory × gpu_memory_utilization
KV budget = requested − weights − activation peak − non-torch increase − CUDA-graph estimate
           (the last only where the version subtracts it, see profiling.py)
KV blocks = KV budget ÷ (layers per KV group × page of one layer); with hybrid attention
(sliding-window, chunked-local or cross-attention layers) the layers are grouped by kind the way
vLLM's kv_cache_utils does and "KV tokens" = blocks ÷ groups × 16, as vLLM logs them.
With pipeline parallelism the smallest stage decides.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from catalog.architecture import Architecture, mlp_params
from catalog.quantization import QuantScheme, coarse_dtype
from planner.engine.assumptions import DTYPE_BYTES, GIB, Assumptions
from planner.engine.messages import Code, Message, message
from planner.engine.mxfp4 import Mxfp4Kernel, expert_storage_factor, mxfp4_kernel
from planner.engine.profiling import (
    GpuVendor,
    NativeSampler,
    ProfilingRules,
    parse_version,
    profiling_rules,
)
from planner.engine.vllm_flags import VLLM_VERSION


@dataclass(frozen=True, slots=True, kw_only=True)
class KvLayout:
    """How one GPU's KV cache is laid out for the layers of one stage (vLLM's KV groups)."""

    page_bytes_per_token: float  # one layer, one token, on this GPU
    group_size: int  # layers sharing one block of memory
    windows: tuple[int, ...]  # one entry per KV group: 0 full, n window tokens
    window_kind: str

    @property
    def num_groups(self) -> int:
        return len(self.windows)

    @property
    def bytes_per_block_token(self) -> float:
        """Return the bytes one block index costs per token slot (all layers of a group)."""
        return self.group_size * self.page_bytes_per_token

    @property
    def bytes_per_token(self) -> float:
        """Return the bytes of one logged "KV token" (every group, padding included)."""
        return self.num_groups * self.bytes_per_block_token

    def blocks_per_request(self, max_model_len: int, batched_tokens: int, block: int) -> int:
        """Return the blocks one max_model_len request holds at most (vLLM max_memory_usage)."""
        total = 0
        for window in self.windows:
            if window <= 0:
                total += math.ceil(max_model_len / block)
            elif self.window_kind == "chunked":
                total += math.ceil(min(window + batched_tokens, max_model_len) / block)
            else:
                total += math.ceil(min(window - 1 + batched_tokens, max_model_len) / block) + 1
        return total


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

    @property
    def worst(self) -> StageMemory:
        """Return the stage that limits the KV cache."""
        return limiting_stage(self.stages)


def partition_layers(num_layers: int, pp: int) -> list[int]:
    """Return layers per stage as vLLM does: the remainder goes to the stages before the last."""
    base = [num_layers // pp] * pp
    for i in range(num_layers % pp):
        base[-(i + 2) if pp > 1 else 0] += 1
    return base


def activation_dtype_bytes(dtype: str) -> float:
    """Return bytes of one activation (and of a 16-bit-kept weight): 4 for fp32, else 2."""
    return 4.0 if dtype == "fp32" else 2.0


def quantized_bytes_per_param(dtype: str, a: Assumptions) -> float:
    """Return bytes per linear-layer weight quantized at load time, with int4 group scales."""
    if dtype == "int4":
        return 0.5 + a.int4_scale_bytes_per_group / a.int4_group_size
    return DTYPE_BYTES[dtype]


def kv_dtype_bytes(kv_cache_dtype: str, weight_dtype: str = "bf16") -> float:
    """Return KV-cache bytes per element ('auto' follows the activation dtype)."""
    if kv_cache_dtype == "fp8":
        return 1.0
    return activation_dtype_bytes(weight_dtype)


def _page_bytes(arch: Architecture, tp: int, kv_bytes: float) -> float:
    if arch.is_mla:
        return (arch.kv_lora_rank + arch.qk_rope_head_dim) * kv_bytes
    return 2.0 * max(1, arch.num_kv_heads // tp) * arch.head_dim * kv_bytes


def kv_layout(
    arch: Architecture, tp: int, start: int, layers: int, kv_cache_dtype: str, dtype: str = "bf16"
) -> KvLayout:
    """Return vLLM's KV grouping for layers [start, start + layers) on one GPU.

    One kind of attention: one group of every layer. Several kinds: groups of
    `group_size` layers (the smallest kind's layer count, or the largest when all are within
    25 %), each kind padded up to whole groups; cross-attention layers hold no per-token KV.
    """
    page = _page_bytes(arch, tp, kv_dtype_bytes(kv_cache_dtype, dtype))
    if not arch.layer_windows:
        return KvLayout(page_bytes_per_token=page, group_size=layers, windows=(0,), window_kind="")
    kinds = Counter(arch.window_of(i) for i in range(start, start + layers))
    kinds.pop(-1, None)
    if not kinds:
        return KvLayout(page_bytes_per_token=page, group_size=1, windows=(), window_kind="")
    if len(kinds) == 1:
        (window, count), *_ = kinds.items()
        return KvLayout(
            page_bytes_per_token=page,
            group_size=count,
            windows=(window,),
            window_kind=arch.window_kind,
        )
    smallest, largest = min(kinds.values()), max(kinds.values())
    group = largest if largest < smallest * 1.25 else smallest
    windows: list[int] = []
    for window, count in sorted(kinds.items()):
        windows.extend([window] * math.ceil(count / group))
    return KvLayout(
        page_bytes_per_token=page,
        group_size=group,
        windows=tuple(windows),
        window_kind=arch.window_kind,
    )


def kv_bytes_per_token(arch: Architecture, tp: int, layers: int, kv_cache_dtype: str) -> float:
    """Return KV-cache bytes per token of `layers` full-attention layers on one GPU at TP `tp`.

    MLA caches one latent (kv_lora_rank + qk_rope_head_dim) per layer on every GPU; ordinary
    attention splits KV heads by TP and replicates them when TP exceeds the KV heads.
    """
    return layers * _page_bytes(arch, tp, kv_dtype_bytes(kv_cache_dtype))


def _attention_bytes_per_gpu(arch: Architecture, tp: int, qb: float, ab: float) -> float:
    h = arch.hidden_size
    if arch.is_mla:
        heads = arch.num_attention_heads
        qk_head = arch.qk_nope_head_dim + arch.qk_rope_head_dim
        replicated = h * (arch.kv_lora_rank + arch.qk_rope_head_dim)
        if arch.q_lora_rank:
            replicated += h * arch.q_lora_rank
            sharded = arch.q_lora_rank * heads * qk_head
        else:
            sharded = h * heads * qk_head
        sharded += arch.kv_lora_rank * heads * (arch.qk_nope_head_dim + arch.v_head_dim)
        sharded += heads * arch.v_head_dim * h
        norms = arch.kv_lora_rank + arch.q_lora_rank
        return (replicated + sharded / tp) * qb + norms * ab
    q_dim = arch.num_attention_heads * arch.head_dim
    kv_dim_gpu = max(1, arch.num_kv_heads // tp) * arch.head_dim
    linear = (h * q_dim) / tp + 2 * h * kv_dim_gpu + (q_dim * h) / tp
    extra = 0.0
    if arch.attention_bias:
        extra += q_dim / tp + 2 * kv_dim_gpu
    if arch.qk_norm:
        extra += 2 * arch.head_dim
    return linear * qb + extra * ab


@lru_cache(maxsize=256)
def _moe_layer_indices(arch: Architecture) -> tuple[int, ...]:
    return tuple(i for i in range(arch.num_layers) if arch.is_moe_layer(i))


def _padded_vocab(vocab: int, tp: int) -> float:
    return math.ceil(vocab / 64) * 64 / tp


def checkpoint_scheme(arch: Architecture, dtype: str) -> QuantScheme | None:
    """Return the checkpoint's own quantization when it is served as stored, else None."""
    scheme = arch.quantization
    if scheme is not None and coarse_dtype(scheme) == dtype:
        return scheme
    return None


def stage_weight_bytes(
    arch: Architecture,
    dtype: str,
    tp: int,
    layer_start: int,
    layers: int,
    *,
    first: bool,
    last: bool,
    single_stage: bool,
    a: Assumptions,
    mxfp4_kernel: Mxfp4Kernel = Mxfp4Kernel.TRITON,
) -> float:
    """Return the weight bytes on one GPU of a stage holding layers [layer_start, +layers).

    A pre-quantized checkpoint served as stored keeps every module its quantization_config
    leaves out (ignore lists, attention or lm_head kept 16-bit); quantizing at load time
    quantizes every linear layer but lm_head. Embeddings, norms and routers stay 16-bit.
    """
    ab = activation_dtype_bytes(dtype)
    scheme = checkpoint_scheme(arch, dtype)
    if scheme is not None:
        qb = scheme.bytes_per_param
    elif dtype in ("bf16", "fp16", "fp32"):
        qb = ab
    else:
        qb = quantized_bytes_per_param(dtype, a)

    end = layer_start + layers
    moe_layers = [i for i in _moe_layer_indices(arch) if layer_start <= i < end]
    n_moe = len(moe_layers)

    def kept(kind: str, among: list[int] | None = None) -> int:
        """Return how many layers of the stage keep module `kind` 16-bit (checkpoint's list)."""
        if scheme is None:
            return 0
        inside = [i for i in scheme.kept_layers(kind) if layer_start <= i < end]
        if among is None:
            return len(inside)
        return len(set(inside) & set(among))

    def mixed(kind: str, count: int, per_layer_params: float, among: list[int] | None) -> float:
        """Return bytes of `count` layers' module `kind`, the kept ones 16-bit."""
        k = kept(kind, among)
        return per_layer_params * ((count - k) * qb + k * ab)

    h = arch.hidden_size
    expert = mlp_params(arch, arch.moe_intermediate_size) / tp
    if scheme is not None and scheme.weight_dtype == "mxfp4":
        # Padded to the shapes the GPU's MXFP4 MoE kernel needs (mxfp4.py).
        expert *= expert_storage_factor(
            arch.hidden_size, arch.moe_intermediate_size / tp, mxfp4_kernel
        )
    shared = mlp_params(arch, arch.shared_expert_width) / tp if arch.shared_expert_width else 0.0
    router = arch.num_experts * h + (arch.num_experts if arch.router_bias else 0)
    k_att = kept("attention")
    total = (layers - k_att) * _attention_bytes_per_gpu(arch, tp, qb, ab)
    total += k_att * _attention_bytes_per_gpu(arch, tp, ab, ab)
    total += layers * arch.norms_per_layer * h * ab
    if n_moe:
        total += mixed("experts", n_moe, arch.num_experts * expert, moe_layers)
        if arch.expert_bias:
            total += n_moe * arch.num_experts * (2 * arch.moe_intermediate_size / tp + h) * ab
        total += mixed("shared_experts", n_moe, shared, moe_layers) + n_moe * router * ab
        if arch.shared_expert_intermediate_size:
            total += n_moe * h * ab  # shared_expert_gate
    dense = mlp_params(arch, arch.intermediate_size) / tp
    dense_layers = [i for i in range(layer_start, end) if i not in set(moe_layers)]
    total += mixed("mlp", layers - n_moe, dense, dense_layers if scheme else None)
    if arch.is_mla and a.mla_absorbed_copies:
        # vLLM's MLA keeps W_UK/W_UV split out of kv_b_proj in the activation dtype
        # (mla_attention.process_weights_after_loading), beside the checkpoint weight.
        heads_per_gpu = arch.num_attention_heads / tp
        per_layer = arch.kv_lora_rank * heads_per_gpu * (arch.qk_nope_head_dim + arch.v_head_dim)
        total += layers * per_layer * ab
    vocab_rows = _padded_vocab(arch.vocab_size, tp) * h
    if first:
        total += vocab_rows * ab + arch.position_embeddings * h * ab
        total += arch.vision_params / (1 if arch.vision_replicated else tp) * ab
    if last:
        total += h * ab
        if not (arch.tie_word_embeddings and single_stage):
            head_q = scheme is not None and scheme.lm_head_quantized
            total += vocab_rows * (qb if head_q else ab)
    # Rotary cos/sin caches in the model dtype (one per GPU); linear/dynamic RoPE scaling
    # stretches the cache by its factor, Gemma 3 keeps a second one for its local layers.
    rotary = arch.qk_rope_head_dim if arch.is_mla else arch.head_dim
    total += (arch.rotary_cache_positions or arch.max_position_embeddings) * rotary * ab
    return total


def default_batched_tokens(visible_gib: float, gpu_slug: str, a: Assumptions) -> int:
    """Return vLLM's default max_num_batched_tokens for `vllm serve` on this GPU (V1)."""
    if visible_gib >= 160:
        return a.default_batched_tokens_huge_gpu
    if visible_gib >= 70 and "a100" not in gpu_slug:
        return a.default_batched_tokens_large_gpu
    return a.default_batched_tokens_small_gpu


def default_max_num_seqs(visible_gib: float, gpu_slug: str, a: Assumptions) -> int:
    """Return vLLM's default max_num_seqs for `vllm serve` on this GPU (V1)."""
    if visible_gib >= 160 or (visible_gib >= 70 and "a100" not in gpu_slug):
        return a.default_max_num_seqs_large_gpu
    return a.default_max_num_seqs_small_gpu


def activation_peak_bytes(
    arch: Architecture,
    tp: int,
    tokens: int,
    max_num_seqs: int,
    *,
    first_stage: bool = True,
    last_stage: bool,
    a: Assumptions,
    dtype: str = "bf16",
    flashinfer_sampler: bool = False,
    sampler_run: bool = True,
) -> float:
    """Return the torch peak of the profile run: a dummy forward, then a dummy sampler.

    forward: `tokens` × (MLP width + hidden + query width) live tensors; MoE layers add the
    fused-MoE workspace (tokens × top-k × (gate/up + down + hidden)), which stays allocated;
    multimodal models add the encoder-cache budget of image embeddings (first stage).
    sampler (last stage): max_num_seqs rows of fp32 logits, copied by the top-k/top-p sort.
    V0 ran no dummy sampler (`sampler_run=False`): only one row of logits per sequence.
    """
    ab = activation_dtype_bytes(dtype)
    widths = []
    if arch.num_layers - arch.num_moe_layers > 0:
        widths.append(arch.intermediate_size)
    if arch.is_moe:
        widths.append(arch.shared_expert_width or arch.moe_intermediate_size)
    mlp = max(widths) / tp
    q_dim = arch.num_attention_heads * arch.head_dim / tp
    forward = (
        tokens
        * ab
        * (a.activation_mlp_factor * mlp + a.activation_hidden_factor * arch.hidden_size + q_dim)
    )
    extra = 0.0
    if arch.is_moe:
        n = arch.moe_intermediate_size / tp
        extra += tokens * arch.experts_per_token * ((arch.mlp_matrices - 1) * n + n) * ab
        extra += tokens * arch.experts_per_token * arch.hidden_size * ab
    if arch.vision_params and first_stage:
        budget = max(tokens, arch.mm_tokens_per_item)
        extra += budget * arch.hidden_size * ab * a.encoder_cache_copies
    if not last_stage:
        return forward + extra
    reqs = min(max_num_seqs, tokens)
    copies = a.sampler_logit_copies if flashinfer_sampler else a.sampler_logit_copies_native
    if not sampler_run:
        return max(forward, reqs * arch.vocab_size * 4.0) + extra
    sampler = reqs * arch.vocab_size * 4.0 * copies + a.sampler_fixed_gib * GIB
    return max(forward, sampler + reqs * arch.hidden_size * ab) + extra


def non_torch_gib(rules: ProfilingRules, tp: int, pp: int, *, custom_all_reduce: bool) -> float:
    """Return the non-torch memory increase per GPU (cuBLAS, NCCL, custom all-reduce buffers)."""
    if tp == 1 and pp == 1:
        return rules.non_torch_single_gpu_gib
    if tp == 1:
        return rules.non_torch_pipeline_only_gib
    extra = (
        rules.non_torch_custom_all_reduce_gib
        if custom_all_reduce
        else rules.non_torch_nccl_only_gib
    )
    return rules.non_torch_single_gpu_gib + extra


def cudagraph_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int) -> list[int]:
    """Return vLLM's default CUDA-graph capture sizes (batch sizes in tokens).

    The largest is min(2 × max_num_seqs, 512, max_num_batched_tokens); below it 1, 2, 4, every
    8 up to 248, then every 16 from 256 (vLLM's config _set_cudagraph_sizes).
    """
    largest = min(2 * max_num_seqs, 512, max_num_batched_tokens)
    sizes = [s for s in (1, 2, 4) if s <= largest]
    sizes += list(range(8, min(largest + 1, 256), 8))
    sizes += list(range(256, largest + 1, 16))
    return sizes


def cuda_graph_count(max_num_seqs: int, max_num_batched_tokens: int) -> int:
    """Return the graphs vLLM captures by default (FULL_AND_PIECEWISE).

    A piecewise graph per capture size, and a full decode graph per capture size up to
    max_num_seqs (a decode batch holds one token per sequence).
    """
    sizes = cudagraph_capture_sizes(max_num_seqs, max_num_batched_tokens)
    return len(sizes) + sum(1 for s in sizes if s <= max_num_seqs)


# The graphs behind the fitted estimate: 0.19 logs at max_num_seqs 1024 (sizes up to 512).
_FITTED_GRAPHS = cuda_graph_count(1024, 8192)


def cuda_graph_gib(layers: int, a: Assumptions, graphs: int = _FITTED_GRAPHS) -> float:
    """Return vLLM's CUDA-graph memory estimate for a stage of `layers` layers.

    vLLM captures the first graph of each mode and extrapolates the second one's extra memory
    to the rest of them (issue 45178): a shared part, plus a part per graph beyond the first of
    each mode. The per-layer part was fitted at `_FITTED_GRAPHS` graphs and scales with the
    graphs the command captures, so a small max_num_seqs gets a smaller estimate.
    """
    per_graph_share = max(0, graphs - 2) / (_FITTED_GRAPHS - 2)
    return a.cuda_graph_base_gib + a.cuda_graph_per_layer_gib * layers * per_graph_share


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
    rules = profiling_rules(vllm_version, vendor, moe=arch.is_moe)
    visible = visible_gib * GIB
    requested = visible * utilization
    tokens = max_num_batched_tokens or default_batched_tokens(visible_gib, gpu_slug, a)
    seqs = max_num_seqs or default_max_num_seqs(visible_gib, gpu_slug, a)
    if rules.full_length_prefill:
        # V0 turned chunked prefill on by default only above 32K tokens.
        tokens = max_model_len if max_model_len <= 32768 else (max_num_batched_tokens or 2048)
    non_torch_per_gpu_gib = non_torch_gib(rules, tp, pp, custom_all_reduce=custom_all_reduce)
    non_torch = (non_torch_per_gpu_gib + a.extra_non_torch_gib) * GIB
    subtract = rules.subtract_cuda_graphs
    if a.subtract_cuda_graph_memory is not None:
        subtract = a.subtract_cuda_graph_memory
    flashinfer = rules.flashinfer_sampler if a.flashinfer_sampler is None else a.flashinfer_sampler
    native_copies = {
        NativeSampler.EARLY_V1: a.sampler_logit_copies_native_early,
        NativeSampler.FULL_SORT: a.sampler_logit_copies_native_full_sort,
        NativeSampler.LEAN: a.sampler_logit_copies_native,
    }[rules.native_sampler]
    a = replace(a, sampler_logit_copies_native=native_copies)
    block = a.block_size_tokens
    graph_count = cuda_graph_count(seqs, tokens)
    stages: list[StageMemory] = []
    start = 0
    for s, layers in enumerate(partition_layers(arch.num_layers, pp)):
        first, last = s == 0, s == pp - 1
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
            mxfp4_kernel=mxfp4_kernel(gpu_slug, vendor, parse_version(rules.version)),
        )
        act_a = (
            a
            if rules.engine == "V1"
            else replace(a, activation_mlp_factor=a.v0_activation_mlp_factor)
        )
        act = activation_peak_bytes(
            arch,
            tp,
            tokens,
            seqs,
            first_stage=first,
            last_stage=last,
            a=act_a,
            dtype=dtype,
            flashinfer_sampler=flashinfer,
            sampler_run=rules.engine == "V1",
        )
        graphs = cuda_graph_gib(layers, a, graph_count) * GIB if subtract else 0.0
        budget = requested - weights - act - non_torch - graphs
        layout = kv_layout(arch, tp, start, layers, kv_cache_dtype, dtype)
        if layout.num_groups and budget > 0:
            blocks = math.floor(budget / (layout.bytes_per_block_token * block))
        else:
            blocks = 0
        per_request = layout.blocks_per_request(max_model_len, tokens, block)
        stages.append(
            StageMemory(
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
                blocks_per_request=per_request,
                kv_groups=max(1, layout.num_groups),
            )
        )
        start += layers
    worst = limiting_stage(stages)
    kv_tokens = min(st.kv_tokens for st in stages)
    max_conc = worst.blocks / max(1, worst.blocks_per_request)
    poorest = min(stages, key=lambda st: st.kv_budget_bytes)
    if poorest.kv_budget_bytes <= 0:
        fits, reason = False, message(Code.REJECT_MEMORY)
    elif max_conc < 1:
        fits, reason = (
            False,
            message(Code.REJECT_KV, kv_tokens=kv_tokens, max_model_len=max_model_len),
        )
    else:
        fits, reason = True, None
    return MemoryResult(
        stages=tuple(stages),
        kv_tokens=kv_tokens,
        blocks=worst.blocks,
        max_concurrency=max_conc,
        fits=fits,
        reason=reason,
        rules=rules,
    )
