"""Every constant the estimate uses, with where it comes from. Shown to users in `assumptions`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from catalog.quantization import FORMAT_BYTES

GIB = 1024**3

DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "mxfp4": FORMAT_BYTES["mxfp4"],
    "int4": 0.5,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumptions:
    """Constants of the memory, network and throughput models (see docs/engine.md)."""

    vllm_version: str = "0.32.0"  # the version the generated configs target (vllm_flags)
    # memory (vLLM V1 gpu_worker.determine_available_memory); what a version subtracts is in
    # profiling.py. Fitted to vLLM 0.19 start-up logs (tests/planner/engine/fixtures).
    block_size_tokens: int = 16
    int4_group_size: int = 128
    int4_scale_bytes_per_group: float = 2.5  # fp16 scale + packed 4-bit zero point (AWQ/GPTQ)
    mla_absorbed_copies: bool = True  # MLA keeps W_UK/W_UV 16-bit copies of kv_b_proj
    activation_mlp_factor: float = 3.0  # live tensors of MLP width per token in the profile run
    activation_hidden_factor: float = 5.0  # live tensors of hidden width per token
    v0_activation_mlp_factor: float = 2.0  # V0's eager forward (vLLM 0.6.4 logs, RTX 3090)
    encoder_cache_copies: float = 3.0  # image embeddings × encoder budget held in the profile run
    sampler_logit_copies: float = 3.0  # fp32 logits, probabilities, scaled copy (FlashInfer)
    flashinfer_sampler: bool | None = None  # None: as the vLLM version does (profiling.py)
    sampler_logit_copies_native: float = 3.6  # PyTorch top-k/top-p from 0.17 (fitted, 0.19)
    sampler_logit_copies_native_early: float = 7.0  # V1 before 0.11 (values + int64 indices)
    sampler_logit_copies_native_full_sort: float = 9.5  # 0.11 to 0.16 (fitted, 0.15 sweep)
    sampler_fixed_gib: float = 0.12  # sampler buffers that do not scale with the vocabulary
    cuda_graph_base_gib: float = 0.3  # vLLM's CUDA-graph estimate: first capture
    cuda_graph_per_layer_gib: float = 0.018  # + per decoder layer of the stage (0.19 estimates)
    subtract_cuda_graph_memory: bool | None = None  # None: as the vLLM version does
    extra_non_torch_gib: float = 0.0  # a team's measured KV overhead (calibration profiles)
    default_batched_tokens_large_gpu: int = 8192  # ≥ 70 GiB and not an A100 (vLLM 0.32 serve)
    default_batched_tokens_huge_gpu: int = 16384  # ≥ 160 GiB
    default_batched_tokens_small_gpu: int = 2048
    default_max_num_seqs_large_gpu: int = 1024
    default_max_num_seqs_small_gpu: int = 256
    # judgement
    small_replica_min_share: float = 0.85  # TP1/TP2 replicas win at ≥ 85 % of a larger TP's tok/s
    # network
    nvlink_efficiency: float = 0.8  # of the per-direction NVLink bandwidth (nvlink_gbs / 2)
    pcie_bandwidth_gbs: float = 25.0  # PCIe 4.0 x16 effective per direction, P2P through the host
    pcie_ring_bandwidth_gbs: float = 15.0  # NCCL bus bandwidth of a ring over 3+ PCIe GPUs
    ethernet_efficiency: float = 0.65  # TCP sockets: 25 GbE ≈ 2 GB/s effective (DOMAIN §2)
    roce_efficiency: float = 0.8
    infiniband_efficiency: float = 0.85  # 400 Gb IB ≈ 42 GB/s
    latency_nvlink_us: float = 8.0  # custom all-reduce / NCCL LL inside a node
    latency_pcie_us: float = 2.0  # NCCL over PCIe: a fixed part, plus one per hop of the ring
    latency_pcie_hop_us: float = 5.5
    latency_infiniband_us: float = 15.0
    latency_roce_us: float = 20.0
    latency_ethernet_us: float = 60.0  # NCCL over TCP sockets
    activation_bytes: float = 2.0  # bf16/fp16 activations cross the wire
    all_reduces_per_layer: int = 2  # after attention and after the MLP
    overlap_factor: float = 0.0  # share of communication hidden behind compute (decode)
    # throughput
    hbm_efficiency: float = 0.75  # achievable share of datasheet HBM bandwidth (fitted, see docs)
    decode_step_overhead_ms: float = 1.5  # scheduler, sampler, launches per decode step
    decode_per_seq_overhead_ms: float = 0.035  # per running sequence per step (fitted)
    # The V0 engine's host work (vLLM < 0.8, serving/host.py), fixed and per running sequence:
    # before 0.6 with the API server on the engine's thread, then in a process of its own. Fitted
    # on the calibration runs of serving_load_runs.json (bench/fit_v0_host.py).
    v0_in_process_step_overhead_ms: float = 4.0
    v0_in_process_per_seq_overhead_ms: float = 0.18
    v0_step_overhead_ms: float = 1.0
    v0_per_seq_overhead_ms: float = 0.16
    v0_multi_gpu_step_overhead_ms: float = 4.0  # driver-to-worker broadcast, executor round trip
    v0_multi_gpu_per_seq_overhead_ms: float = 0.02  # the broadcast's metadata per running sequence
    decode_mfu: float = 0.5
    prefill_mfu: float = 0.7  # fitted on the serving runs (bench/fit_serving.py)
    pp_efficiency: float = 0.9  # pipeline bubbles
    # Each step of a replica whose pipeline stages sit on different nodes also waits for the
    # executor's round trip between them (vLLM over Ray): fitted on one run, Qwen2.5-72B at TP 8
    # × PP 2 on two H100 nodes, 67.5 tok/s against 99.5 on one node (docs/benchmarks.md).
    pp_cross_node_step_overhead_ms: float = 4.6
    balancer_efficiency: float = 0.95  # least_conn balancing is not perfect
    # The share of its GPUs' time an instance gets: 0.5 when a pool plan lets two small models
    # share a GPU (no MPS: the two processes time-slice it; both busy is the case planned for).
    gpu_time_share: float = 1.0
    cold_start_gbs: float = 1.5  # effective weight load speed from local NVMe/page cache, GB/s
    # serving model (planner/engine/serving; fitted by bench/fit_serving.py on the calibration
    # runs of tests/planner/engine/fixtures/serving_runs.json)
    # Routed experts (fitted on NVIDIA's measured vLLM fused-MoE kernel times in
    # aiconfigurator-core 0.12 — Qwen3-30B-A3B, Mixtral-8x7B, Qwen3-235B-A22B on A100/H100/H200,
    # batch 1-64 — by bench/fit_moe_kernels.py; mean error 8 % on those tables). The kernel reads
    # the touched experts at 1.15 × the dense reads' efficiency (86 % of the datasheet), the
    # distinct experts a batch touches grow like uniform top-k routing of 0.9 × its tokens, and
    # each MoE layer pays a fixed 25 µs (router, permute, grouped-GEMM launch, combine) for bf16
    # experts, scaled per weight format and GPU generation by serving/kernels.py's
    # moe_fixed_scale (bench/fit_moe_floors.py).
    moe_hbm_efficiency: float = 1.15
    moe_routing_token_share: float = 0.9
    # The expert slice width per GPU (moe_intermediate_size / TP) at which the fused-MoE GEMMs
    # reach half their wide-slice rate (serving/kernels.py's shares; bench/fit_moe_compute.py).
    moe_shard_knee: float = 352.0
    launch_per_layer_decode_us: float = 20.0  # CUDA-graph replay, per layer and decode step
    launch_per_layer_mixed_us: float = 60.0  # piecewise graphs when a prefill chunk rides along
    moe_layer_fixed_us: float = 25.0
    # Fixed kernel time per MLA layer (latent up-projections): an estimate, not calibrated.
    mla_layer_fixed_us: float = 20.0
    # vLLM's MLA decode kernel reads the latent KV cache at this share of the dense reads'
    # bandwidth: aiconfigurator-core's measured MLA blocks (DeepSeek-R1, TP 8, H200, batch
    # 16-256, context 2,000 → 8,000) take 0.11-0.13 µs per (sequence, context token) pair where
    # the reads alone would take 0.02 (bench/fit_mla_kernels.py). No benchmark run is used.
    mla_kv_read_efficiency: float = 0.18
    request_overhead_ms: float = 24.0  # API server, tokenizer, detokenizer per request (fitted)
    # The API server's serial work under load (serving/frontend.py): per request admitted, per
    # prompt token tokenised, per output token streamed. Fitted on the server-bound calibration
    # run of tests/planner/engine/fixtures/serving_load_runs.json (bench/fit_frontend.py): it
    # pins the admission (~9 ms for a 512-token request; the per-token part is held at 2 µs)
    # and only loosely the streaming cost (0-15 µs lie within 1 % of the best fit).
    frontend_request_ms: float = 8.0
    frontend_prompt_token_us: float = 2.0
    frontend_token_us: float = 5.0
    # Uncertainty bands come from the calibration residuals per regime: serving/bands.json,
    # written by bench/fit_bands.py.

    def to_dict(self) -> dict[str, Any]:
        """Return every constant as a JSON-able dict."""
        return asdict(self)


DEFAULT_ASSUMPTIONS = Assumptions()
