"""Per-GPU memory the way vLLM V1 budgets it (gpu_worker.determine_available_memory).

requested = driver-visible memory × gpu_memory_utilization
KV budget = requested − weights − activation peak − non-torch increase − CUDA-graph estimate
           (the last only where the version subtracts it, see profiling.py)
KV blocks = KV budget ÷ (layers per KV group × page of one layer); with hybrid attention
(sliding-window, chunked-local or cross-attention layers) the layers are grouped by kind the way
vLLM's kv_cache_utils does and "KV tokens" = blocks ÷ groups × 16, as vLLM logs them.
With pipeline parallelism the smallest stage decides.

One module per term: `weights`, `activations`, `overheads` (non-torch and CUDA graphs), `kv`
(the cache's layout), and `budget`, which subtracts them stage by stage (`plan_memory`); `room`
says which setting would leave a KV cache when nothing is left.
"""

from planner.engine.memory.activations import (
    activation_peak_bytes,
    default_batched_tokens,
    default_max_num_seqs,
)
from planner.engine.memory.budget import MemoryResult, StageMemory, limiting_stage, plan_memory
from planner.engine.memory.kv import (
    KvLayout,
    activation_dtype_bytes,
    kv_bytes_per_token,
    kv_dtype_bytes,
    kv_layout,
)
from planner.engine.memory.overheads import (
    cuda_graph_count,
    cuda_graph_gib,
    cudagraph_capture_sizes,
    non_torch_gib,
)
from planner.engine.memory.weights import (
    checkpoint_scheme,
    partition_layers,
    quantized_bytes_per_param,
    stage_weight_bytes,
)

__all__ = [
    "KvLayout",
    "MemoryResult",
    "StageMemory",
    "activation_dtype_bytes",
    "activation_peak_bytes",
    "checkpoint_scheme",
    "cuda_graph_count",
    "cuda_graph_gib",
    "cudagraph_capture_sizes",
    "default_batched_tokens",
    "default_max_num_seqs",
    "kv_bytes_per_token",
    "kv_dtype_bytes",
    "kv_layout",
    "limiting_stage",
    "non_torch_gib",
    "partition_layers",
    "plan_memory",
    "quantized_bytes_per_param",
    "stage_weight_bytes",
]
