"""The KV cache's layout: attention groups, the page of one layer, bytes per token."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from catalog.architecture import Architecture


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


def activation_dtype_bytes(dtype: str) -> float:
    """Return bytes of one activation (and of a 16-bit-kept weight): 4 for fp32, else 2."""
    return 4.0 if dtype == "fp32" else 2.0


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
