"""Which memory-profiling rules a vLLM version follows when it sizes the KV cache.

vLLM sizes the KV cache from a profile run at start-up; what that run measures changed over
the releases. The engine plans with the rules of the version the spec names:

* V0 engine (< 0.8): profiles one full-length prefill of max_model_len tokens (chunked prefill
  was off by default up to 32K tokens; beyond, 2048-token chunks), then samples every dummy
  sequence with top-k/top-p "to reflect the accurate memory usage". Through FlashInfer (in
  vLLM's images) that holds one fp32 row of logits per sequence (an A10 log: 0.22 GiB); through
  PyTorch's sort, where FlashInfer is absent, about 7 copies (two pip installs on Turing cards:
  Llama-3.2-3B on a T4 under 0.8.2 peaks 0.90 GiB, OPT-125M 0.47 GiB over its weights). The
  engine takes FlashInfer as absent below Ampere, an inference from those three logs; 0.35 GiB
  non-torch on one GPU (0.6.4 logs), 1.79 GiB in the 0.6.5 build of the profiling overhaul,
  which counted the CUDA context (PR #10511 logs), and about 0.18 GiB from 0.6.6 (one-GPU V0
  logs of December 2024 to April 2025 report 0.01 to 0.26 GiB: a T4, a 79.25 GiB card, an
  H100, RTX 3090s).
* V1 before 0.11: chunked prefill, a dummy sampler run (FlashInfer's top-k/top-p where
  installed, else a PyTorch sort with ~7 fp32 copies of the logits); non-torch memory measured
  from start-up (0.1 GiB on one GPU in 0.10 logs).
* V1 from 0.11: non-torch memory is the increase during the profile run; the FlashInfer
  sampler is opt-in ("available but disabled by default"). Up to 0.16 the dummy sampler run
  sorts the full fp32 logits of max_num_seqs rows (about 9.5 copies of them: 5.64 GiB of
  activation for Qwen3-14B on 0.15 and 0.16, 2.23 GiB on 0.17 and 0.18, llm-d-planner's version
  sweep); non-torch memory is 0.13 GiB on one GPU up to 0.17 (0.55 GiB at TP 2 with the
  custom all-reduce: llm-d-planner's January 2026 runs of the then latest image) and 0.25 GiB
  from 0.18 (2.1 GiB at TP ≥ 2 with the custom all-reduce, 0.07 GiB with pipeline stages only:
  vLLM 0.19 logs). The TP figure is assumed to change with the single-GPU one, at 0.18.
* From 0.21: the CUDA-graph memory estimate is subtracted before the KV budget
  ("CUDA graph memory profiling is enabled (default since v0.21.0)" in 0.27 logs;
  `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`). 0.19 estimated and logged it, but did not
  subtract it.
* From 0.22 the FlashInfer top-k/top-p sampler is the default again ("Using FlashInfer for
  top-p & top-k sampling" in 0.22, 0.23 and 0.26 logs without any setting).

GPUs below compute capability 8.0 (Volta, Turing) kept the V0 engine after 0.8: vLLM 0.8 to
0.10.1 log "Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0." (a
T4 on 0.8.2 in a public notebook; vLLM issue 23531 on 0.10.1) until PR 23614 (merged 26 August
2025) let V1 run them on FlexAttention; 0.10.2 is the first release with it. The engine follows
V0's rules for them over those versions.

The CUDA-graph estimate also depends on the GPU vendor and on the model runner:

* The estimate runs on CUDA only. ROCm skips it (vLLM PR 36720, merged March 2026, before the
  0.21 default: its mem_get_info and graph pool gave wrong or negative estimates there) until
  PR 48526 (merged 15 July 2026) profiles ROCm again; the engine takes 0.26 as the first release
  with it (0.25.1 shipped Model Runner V2 by 20 July, PR 49233; 0.26 was out by 1 August),
  an inference from those dates. Intel XPU and other platforms stay excluded (PR 48526).
* From 0.25.1 dense models run Model Runner V2 by default, whose profile_cudagraph_memory()
  returns 0 (vLLM issue 49224): nothing is subtracted for them (a 0.27.1 log of Qwen2.5-0.5B
  reports "0.0 GiB for CUDAGraph memory"). The engine assumes 0.29 measures V2's graphs (its
  capture samples free memory around each graph, 0.28 -> 0.29 changes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from catalog.data import GpuVendor

V0_SMALL_NON_TORCH_SINCE = (0, 6, 6)
V1_DEFAULT_SINCE = (0, 8, 0)
V1_ON_PRE_AMPERE_SINCE = (0, 10, 2)
DELTA_NON_TORCH_SINCE = (0, 11, 0)
LEAN_SAMPLER_SINCE = (0, 17, 0)
LARGER_NON_TORCH_SINCE = (0, 18, 0)
CUDA_GRAPH_ESTIMATE_SINCE = (0, 21, 0)
FLASHINFER_SAMPLER_AGAIN_SINCE = (0, 22, 0)
RUNNER_V2_DENSE_SINCE = (0, 25, 1)
RUNNER_V2_GRAPHS_PROFILED_SINCE = (0, 29, 0)
ROCM_GRAPHS_PROFILED_SINCE = (0, 26, 0)


class VersionError(ValueError):
    """A vllm_version string that is not a release number like '0.19.0'."""


class CudaGraphRule(StrEnum):
    """Whether, and why, vLLM subtracts its CUDA-graph estimate before the KV budget."""

    SUBTRACTED = "subtracted"  # 0.21 on, CUDA (ROCm from 0.26), legacy model runner
    CAPTURED_AFTER = "captured_after"  # before 0.21: graphs captured after the KV cache
    SKIPPED_PLATFORM = "skipped_platform"  # not profiled on ROCm (0.21-0.25), XPU and others
    RUNNER_V2_ZERO = "runner_v2_zero"  # Model Runner V2 (dense models, 0.25.1-0.28) returns 0


class NativeSampler(StrEnum):
    """How the dummy sampler run of a V1 version holds the logits without FlashInfer."""

    EARLY_V1 = "early_v1"  # before 0.11: PyTorch sort, values + int64 indices
    FULL_SORT = "full_sort"  # 0.11 to 0.16: sort of the full fp32 logits
    LEAN = "lean"  # from 0.17


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfilingRules:
    """The profiling behaviour of one vLLM version, and the text that explains it."""

    version: str
    engine: str  # V0 | V1
    full_length_prefill: bool  # V0 profiles max_model_len tokens (≤ 32K, chunked prefill off)
    subtract_cuda_graphs: bool
    non_torch_single_gpu_gib: float
    non_torch_custom_all_reduce_gib: float  # extra per GPU at TP ≥ 2 with the custom all-reduce
    non_torch_nccl_only_gib: float  # extra per GPU at TP ≥ 2 when only NCCL runs
    non_torch_pipeline_only_gib: float  # whole non-torch figure with PP ≥ 2 and TP 1
    flashinfer_sampler: bool  # the dummy sampler run uses FlashInfer's top-k/top-p
    native_sampler: NativeSampler  # what the PyTorch top-k/top-p path of the version keeps
    cuda_graph_rule: CudaGraphRule = CudaGraphRule.CAPTURED_AFTER

    @property
    def description(self) -> str:
        """Return one English sentence naming the rules applied."""
        if self.engine == "V0":
            profile = "V0 engine: profiles one full-length prefill (max_model_len tokens)"
        else:
            profile = "V1 engine: profiles one chunk of max_num_batched_tokens and a sampler run"
        graphs = {
            CudaGraphRule.SUBTRACTED: "CUDA-graph memory estimated and subtracted before the KV "
            "budget",
            CudaGraphRule.CAPTURED_AFTER: "CUDA-graph memory captured after the KV cache is "
            "allocated (not subtracted)",
            CudaGraphRule.SKIPPED_PLATFORM: "CUDA-graph memory not estimated on this GPU vendor's "
            "platform (not subtracted)",
            CudaGraphRule.RUNNER_V2_ZERO: "CUDA-graph estimate of Model Runner V2 is 0 for dense "
            "models (not subtracted)",
        }[self.cuda_graph_rule]
        return f"vLLM {self.version} rules: {profile}; {graphs}."


# V0 turned chunked prefill on by default only past a 32K context, in 2048-token chunks.
V0_CHUNKED_PREFILL_ABOVE = 32_768
V0_CHUNK_TOKENS = 2048


def v0_chunks_prefill(max_model_len: int) -> bool:
    """Return whether V0 chunked prompts by default at this context length."""
    return max_model_len > V0_CHUNKED_PREFILL_ABOVE


def v0_profile_tokens(max_model_len: int, max_num_batched_tokens: int | None) -> int:
    """Return the tokens of V0's profile run: one whole context where it did not chunk, else a
    chunk (the stated budget or V0's default)."""
    if not v0_chunks_prefill(max_model_len):
        return max_model_len
    return max_num_batched_tokens or V0_CHUNK_TOKENS


# One character class for the suffix: the former `(?:[.\-+]?\w*)*` matched the same strings but
# backtracked exponentially on a refused one (26 characters took 17 s), and a spec's
# vllm_version comes from whoever posts it.
VERSION_PATTERN = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?[.\-+\w]*")
MAX_VERSION_CHARS = 64


@lru_cache(maxsize=256)
def parse_version(version: str) -> tuple[int, int, int]:
    """Return (major, minor, patch) of '0.19.0', 'v0.10.1.1' or '0.11.0rc2'."""
    match = len(version) <= MAX_VERSION_CHARS and VERSION_PATTERN.fullmatch(version.strip())
    if not match:
        raise VersionError(f"not a vLLM release number: {version!r} (e.g. 0.19.0)")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def runs_v0(v: tuple[int, int, int], *, pre_ampere: bool = False) -> bool:
    """Return whether vLLM `v` runs its V0 engine (`pre_ampere`: on a GPU below compute
    capability 8.0, which kept V0 up to 0.10.1)."""
    return v < V1_DEFAULT_SINCE or (pre_ampere and v < V1_ON_PRE_AMPERE_SINCE)


def cuda_graph_rule(
    v: tuple[int, int, int], vendor: GpuVendor = GpuVendor.NVIDIA, *, moe: bool = False
) -> CudaGraphRule:
    """Return whether vLLM `v` subtracts its CUDA-graph estimate on `vendor`, and why not."""
    if v < CUDA_GRAPH_ESTIMATE_SINCE:
        return CudaGraphRule.CAPTURED_AFTER
    profiled = vendor == GpuVendor.NVIDIA or (
        vendor == GpuVendor.AMD and v >= ROCM_GRAPHS_PROFILED_SINCE
    )
    if not profiled:
        return CudaGraphRule.SKIPPED_PLATFORM
    if not moe and RUNNER_V2_DENSE_SINCE <= v < RUNNER_V2_GRAPHS_PROFILED_SINCE:
        return CudaGraphRule.RUNNER_V2_ZERO
    return CudaGraphRule.SUBTRACTED


def profiling_rules(
    version: str,
    vendor: GpuVendor = GpuVendor.NVIDIA,
    *,
    moe: bool = False,
    pre_ampere: bool = False,
) -> ProfilingRules:
    """Return the profiling rules vLLM `version` follows on a `vendor` GPU (`moe`: MoE model;
    `pre_ampere`: a GPU below compute capability 8.0)."""
    v = parse_version(version)
    if runs_v0(v, pre_ampere=pre_ampere):
        # The 0.6.5 profiling overhaul (PR #10511) counted the CUDA context as non-torch memory.
        context = 0.35
        if v >= V0_SMALL_NON_TORCH_SINCE:
            context = 0.18
        elif v >= (0, 6, 5):
            context = 1.79
        return ProfilingRules(
            version=version,
            engine="V0",
            full_length_prefill=True,
            subtract_cuda_graphs=False,
            non_torch_single_gpu_gib=context,
            non_torch_custom_all_reduce_gib=1.79,
            non_torch_nccl_only_gib=0.4,
            non_torch_pipeline_only_gib=context,
            flashinfer_sampler=not pre_ampere,
            native_sampler=NativeSampler.EARLY_V1,
        )
    delta = v >= DELTA_NON_TORCH_SINCE
    sampler = NativeSampler.LEAN
    if not delta:
        sampler = NativeSampler.EARLY_V1
    elif v < LEAN_SAMPLER_SINCE:
        sampler = NativeSampler.FULL_SORT
    graph_rule = cuda_graph_rule(v, vendor, moe=moe)
    single_gpu, all_reduce = 0.1, 1.85
    if delta:
        single_gpu, all_reduce = (0.25, 1.85) if v >= LARGER_NON_TORCH_SINCE else (0.13, 0.42)
    return ProfilingRules(
        version=version,
        engine="V1",
        full_length_prefill=False,
        subtract_cuda_graphs=graph_rule == CudaGraphRule.SUBTRACTED,
        non_torch_single_gpu_gib=single_gpu,
        non_torch_custom_all_reduce_gib=all_reduce,
        non_torch_nccl_only_gib=0.35,
        non_torch_pipeline_only_gib=0.07 if delta else 0.35,
        flashinfer_sampler=not delta or v >= FLASHINFER_SAMPLER_AGAIN_SINCE,
        native_sampler=sampler,
        cuda_graph_rule=graph_rule,
    )
