"""The activation peak of vLLM's profile run, and the batch limits it is measured at."""

from __future__ import annotations

from catalog.architecture import Architecture
from catalog.generations import pre_ampere
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.memory.kv import activation_dtype_bytes
from planner.engine.profiling import parse_version, runs_v0

# How `vllm serve` (V1) chose its batch limits when none were set, by release (V0, the default
# engine before 0.8 and kept on GPUs below Ampere up to 0.10.1, used 256 sequences everywhere):
# - up to 0.8.4 by the GPU's name: H100 and H200 got the large limits (PR 12369, from 0.7.1);
#   from 0.8.4 the others got 256 sequences again (PR 16158, 1,024 before);
# - 0.8.5 by memory: every GPU with 70 GiB or more, the A100 80 GB included (PR 17073);
# - from 0.9 the A100 is left out again (PR 17885), and 160 GiB or more gets the largest tier.
BY_NAME_UNTIL = (0, 8, 5)
A100_LARGE_UNTIL = (0, 9, 0)
SMALL_SEQS_FOR_OTHERS_SINCE = (0, 8, 4)
NAMED_LARGE_GPUS = ("h100", "h200")


def _gets_large_defaults(visible_gib: float, gpu_slug: str, v: tuple[int, int, int]) -> bool:
    if v < BY_NAME_UNTIL:
        return any(name in gpu_slug for name in NAMED_LARGE_GPUS)
    if v < A100_LARGE_UNTIL:
        return visible_gib >= 70
    return visible_gib >= 70 and "a100" not in gpu_slug


def default_batched_tokens(
    visible_gib: float, gpu_slug: str, a: Assumptions, version: str | None = None
) -> int:
    """Return the max_num_batched_tokens `vllm serve` (V1) of `version` (default: the planned
    one, a.vllm_version) starts with on this GPU."""
    v = parse_version(version or a.vllm_version)
    if v >= A100_LARGE_UNTIL and visible_gib >= 160:
        return a.default_batched_tokens_huge_gpu
    if _gets_large_defaults(visible_gib, gpu_slug, v):
        return a.default_batched_tokens_large_gpu
    return a.default_batched_tokens_small_gpu


def default_max_num_seqs(
    visible_gib: float, gpu_slug: str, a: Assumptions, version: str | None = None
) -> int:
    """Return the max_num_seqs `vllm serve` (V1) of `version` (default: the planned one)
    starts with on this GPU."""
    v = parse_version(version or a.vllm_version)
    if runs_v0(v, pre_ampere=pre_ampere(gpu_slug)):
        return a.default_max_num_seqs_small_gpu  # V0's 256 everywhere
    if v < SMALL_SEQS_FOR_OTHERS_SINCE or _gets_large_defaults(visible_gib, gpu_slug, v):
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
    sorting_sampler: bool = True,
) -> float:
    """Return the torch peak of the profile run: a dummy forward, then a dummy sampler.

    forward: `tokens` × (MLP width + hidden + query width) live tensors; MoE layers add the
    fused-MoE workspace (tokens × top-k × (gate/up + down + hidden)), which stays allocated;
    multimodal models add the encoder-cache budget of image embeddings (first stage).
    sampler (last stage): max_num_seqs rows of fp32 logits, copied by the top-k/top-p sort.
    V0 sampling through FlashInfer (`sorting_sampler=False`) held one fp32 row per sequence.
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
    if not sorting_sampler:
        return max(forward, reqs * arch.vocab_size * 4.0) + extra
    sampler = reqs * arch.vocab_size * 4.0 * copies + a.sampler_fixed_gib * GIB
    return max(forward, sampler + reqs * arch.hidden_size * ab) + extra
