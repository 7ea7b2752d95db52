"""Memory outside the torch allocator and the CUDA graphs: NCCL and custom all-reduce buffers,
graph captures.
"""

from __future__ import annotations

from planner.engine.assumptions import Assumptions
from planner.engine.profiling import ProfilingRules


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
