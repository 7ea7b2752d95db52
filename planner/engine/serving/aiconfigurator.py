"""Forward-pass times from aiconfigurator-core's measured kernel tables (the optional extra).

aiconfigurator-core (NVIDIA, Apache-2.0) ships GEMM, attention, all-reduce and MoE latencies
measured with vLLM on A100/H100/H200/B200/L40S and composes a model's forward pass from them.
We ask it for whole-model passes of one micro-batch and keep everything around them ours:
the scheduler, host overheads, pipeline hops and bubbles. Two calls cover any step:

- a decode pass of b sequences at context c (`decode_step_per_op`);
- a mixed pass of P prefill tokens next to b decodes (`mixed_step_breakdown_per_op`), whose
  context-attention time is rescaled from the prompt it assumed to the chunk's real query×key
  pairs, and whose decode attention is taken from the decode pass at the decodes' own context.

Its all-reduce times were measured over the system's NVLink; when the replica's TP link is
anything else (PCIe, host-staged, cross-node) those ops are dropped and the caller adds the
link model's all-reduce instead. Calls are bucketed (about 4 % steps) and cached, so a
simulation of a few hundred requests costs a few hundred table look-ups.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.engine.serving.kernel_times import (
    BackendUnavailable,
    KernelTableMiss,
    KernelTimes,
    StepShape,
)

# Catalog GPU slug -> aiconfigurator system with measured vLLM tables.
SYSTEMS = {
    "a100-80g-sxm": "a100_sxm",
    "a100-40g-sxm": "a100_sxm",
    "a800-80g-sxm": "a100_sxm",
    "h100-sxm": "h100_sxm",
    "h200-sxm": "h200_sxm",
    "b200": "b200_sxm",
    "l40s": "l40s",
    "h800-sxm": "h100_sxm",  # H100 silicon; its 400 GB/s NVLink is not the tables' (COMPUTE_ONLY)
}
# GPUs whose kernels the tables time but whose all-reduce they do not (another link).
COMPUTE_ONLY = frozenset({"h800-sxm"})
# Architectures the library does not name that are another one's graph: Mistral without a
# sliding window is Llama's (same layers, GQA, RoPE, SiLU MLP).
_SAME_GRAPH = {"MistralForCausalLM": "LlamaForCausalLM"}
# Our weight dtype -> (GEMM quant mode, MoE quant mode) as vLLM runs it. FP8 experts are read
# from the block-quantized tables: vLLM serves FP8 MoE checkpoints (Qwen3-FP8, DeepSeek) with
# 128×128 blocks, and 0.12's per-tensor "fp8" MoE tables time them 3× slower than bf16 on
# H100/H200 (its block-quantized dense GEMM tables are 5× slower still, so dense layers keep "fp8").
QUANT = {
    "bf16": ("bfloat16", "bfloat16"),
    "fp16": ("bfloat16", "bfloat16"),
    "fp8": ("fp8", "fp8_block"),
    "int8": ("int8_wo", "bfloat16"),
    "int4": ("int4_wo", "int4_wo"),
    "mxfp4": ("bfloat16", "w4a16_mxfp4"),
}
_HANDLES: dict[tuple[Any, ...], Any] = {}
_REFUSED: dict[tuple[Any, ...], str] = {}  # layouts the library refused, with its reason
_PASSES: dict[int, Any] = {}  # AicPasses per compiled handle: look-ups outlive one plan()
_MODEL_DIRS: dict[str, Path] = {}


def _bucket(x: float) -> int:
    """Round to a 1/16-octave grid above 16 (exact below), so nearby steps share a look-up."""
    if x <= 16:
        return max(1, int(round(x)))
    return int(round(2 ** (round(math.log2(x) * 16) / 16)))


def _split(ops: list[tuple[str, float, float, str]]) -> tuple[float, float, float]:
    """Return (attention ms, all-reduce ms, everything else ms) of a per-op list."""
    attn = ar = rest = 0.0
    for name, ms, *_ in ops:
        if name.endswith("_attention"):
            attn += ms
        elif "_ar" in name:
            ar += ms
        elif not name.endswith("_p2p"):
            rest += ms
    return attn, ar, rest


# The library converts its arguments to unsigned 32-bit integers; a context past this is no
# model's (the largest catalog context is 10M tokens) and would raise OverflowError.
_U32_MAX = 2**32 - 1


def _library_error(exc: Exception) -> str:
    """Return the library's first line, without the local paths it names."""
    text = str(exc)
    return text.splitlines()[0].split(" at /")[0][:160] if text else type(exc).__name__


class AicPasses:
    """Whole-model forward passes of one replica from aiconfigurator's tables (cached).

    Every context it passes on is clamped to `max_context` (no query of the model attends to
    more keys), and a call the library refuses raises KernelTableMiss, cached like a hit.
    """

    def __init__(self, handle: Any, max_context: int = _U32_MAX) -> None:
        self._h = handle
        self._max_context = max(1, min(int(max_context), _U32_MAX))
        self._decode: dict[tuple[int, int], tuple[float, float, float] | str] = {}
        self._mixed: dict[tuple[int, int, int], tuple[float, float, float] | str] = {}

    def _decode_pass(self, b: int, c: int) -> tuple[float, float, float]:
        key = (b, c)
        hit = self._decode.get(key)
        if hit is None:
            try:
                hit = _split(self._h.decode_step_per_op(b, max(c - 1, 1), 1))
            except Exception as exc:  # noqa: BLE001 - any refusal is a miss for this step
                hit = f"decode of {b} sequences at {c} tokens: {_library_error(exc)}"
            self._decode[key] = hit
        if isinstance(hit, str):
            raise KernelTableMiss(hit)
        return hit

    def _mixed_pass(self, p: int, b: int, length: int) -> tuple[float, float, float]:
        key = (p, b, length)
        hit = self._mixed.get(key)
        if hit is None:
            try:
                shared, ctx_attn, _ = self._h.mixed_step_breakdown_per_op(p, b, length, 1, 0)
                attn, ar, rest = _split(shared)
                hit = (sum(op[1] for op in ctx_attn) + attn, ar, rest)
            except Exception as exc:  # noqa: BLE001 - any refusal is a miss for this step
                hit = f"{p} prefill tokens of {length}-token prompts: {_library_error(exc)}"
            self._mixed[key] = hit
        if isinstance(hit, str):
            raise KernelTableMiss(hit)
        return hit

    def forward_ms(self, shape: StepShape) -> tuple[float, float]:
        decode = shape.decode_seqs
        c = min(_bucket(max(shape.decode_context, 1.0)), self._max_context)
        if shape.prefill_tokens <= 0:
            b = _bucket(decode)
            attn, ar, rest = self._decode_pass(b, c)
            scale = decode / b
            return _finite((attn + rest) * scale, ar * scale)
        p = _bucket(shape.prefill_tokens)
        # The prompt length aiconfigurator assumes: the chunk's end for a chunk of this shape.
        # A steady state of a layout that holds almost nothing asks for a sliver of a prompt
        # with a whole prompt's pairs; no query attends to more than the model's context.
        per_query = shape.prefill_pairs / shape.prefill_tokens
        length = _bucket(max(shape.prefill_tokens, per_query + shape.prefill_tokens / 2))
        length = min(length, self._max_context)
        b = _bucket(decode) if decode >= 0.5 else 0
        ctx_attn, ar, rest = self._mixed_pass(p, b, length)
        # aiconfigurator's context attention covers p/L prompts of L tokens (p ≥ L) or one of
        # ceil(L/p) chunks of an L-token prompt; rescale to the pairs this step really has.
        full = length * (length + 1) / 2
        assumed = full * p / length if p >= length else full / math.ceil(length / p)
        ctx_attn *= shape.prefill_pairs / assumed if assumed > 0 else 0.0
        dec_attn = self._decode_pass(b, c)[0] if b else 0.0
        scale = (shape.prefill_tokens + decode) / (p + b)
        return _finite(ctx_attn + dec_attn + rest * scale, ar * scale)


def _finite(compute_ms: float, all_reduce_ms: float) -> tuple[float, float]:
    """Return the pass's times, or raise KernelTableMiss when the tables gave no real time."""
    if not (math.isfinite(compute_ms) and math.isfinite(all_reduce_ms)) or compute_ms < 0:
        raise KernelTableMiss(f"the tables gave {compute_ms} ms for a pass")
    return compute_ms, all_reduce_ms


def _max_context(hf_config: Mapping[str, Any]) -> int:
    """Return the longest context the model's config allows (text config of a multimodal one)."""
    text = hf_config.get("text_config") or hf_config
    value = text.get("max_position_embeddings") or hf_config.get("max_position_embeddings")
    return int(value) if isinstance(value, int | float) and value > 0 else _U32_MAX


def _as_library_sees(hf_config: Mapping[str, Any]) -> dict[str, Any]:
    """Return `hf_config` under the architecture name the library knows for its graph."""
    out = dict(hf_config)
    archs = out.get("architectures") or []
    same = _SAME_GRAPH.get(archs[0]) if archs else None
    if same is not None and not out.get("sliding_window"):
        out["architectures"] = [same]
    return out


def _model_dir(hf_config: Mapping[str, Any]) -> Path:
    """Return a directory holding `hf_config` as config.json (aiconfigurator reads a path)."""
    text = json.dumps(_as_library_sees(hf_config), sort_keys=True)
    hit = _MODEL_DIRS.get(text)
    if hit is None:
        hit = Path(tempfile.mkdtemp(prefix="serveplan-aic-"))
        (hit / "config.json").write_text(text)
        _MODEL_DIRS[text] = hit
    return hit


def compiled(hf_config: Mapping[str, Any], *, gpu_slug: str, tp: int, dtype: str, kv: str) -> Any:
    """Return aiconfigurator's compiled engine of one replica (cached per process)."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    system = SYSTEMS[gpu_slug]
    gemm, moe = QUANT[dtype]
    key = (json.dumps(hf_config, sort_keys=True), system, tp, gemm, moe, kv)
    handle = _HANDLES.get(key)
    if handle is None:
        logging.getLogger("aiconfigurator_core").setLevel(logging.ERROR)
        handle = EngineHandle.compile(
            str(_model_dir(hf_config)),
            system,
            "vllm",
            tp_size=tp,
            pp_size=1,
            moe_tp_size=tp,  # vLLM shards every expert across the TP ranks (no EP)
            moe_ep_size=1,
            gemm_quant_mode=gemm,
            moe_quant_mode=moe,
            kvcache_quant_mode=kv,
        )
        handle.decode_step_latency(1, 128, 1)  # fail here, not mid-simulation
        _HANDLES[key] = handle
    return handle


def kernel_times(
    *,
    hf_config: Mapping[str, Any] | None,
    gpu_slug: str,
    tp: int,
    dtype: str,
    kv_cache_dtype: str,
    nvlink_tp: bool,
) -> KernelTimes:
    """Return aiconfigurator's kernel times for one replica, or raise BackendUnavailable."""
    try:
        import aiconfigurator_core  # noqa: F401
    except ImportError as exc:
        raise BackendUnavailable(
            "aiconfigurator-core is not installed (pip install 'serveplan[aiconfigurator]')"
        ) from exc
    system = SYSTEMS.get(gpu_slug)
    if system is None:
        raise BackendUnavailable(f"aiconfigurator has no measured vLLM tables for {gpu_slug}")
    if hf_config is None:
        raise BackendUnavailable("aiconfigurator needs the model's config.json (catalog models)")
    if dtype not in QUANT:
        raise BackendUnavailable(f"aiconfigurator has no kernels for {dtype} weights")
    kv = "fp8" if kv_cache_dtype.startswith("fp8") else "bfloat16"
    key = (json.dumps(hf_config, sort_keys=True), system, tp, dtype, kv)
    if key in _REFUSED:
        raise BackendUnavailable(_REFUSED[key])
    try:
        handle = compiled(hf_config, gpu_slug=gpu_slug, tp=tp, dtype=dtype, kv=kv)
    except Exception as exc:  # noqa: BLE001 - any refusal of the library means "not covered"
        _REFUSED[key] = (
            f"aiconfigurator cannot model this layout on {system} ({dtype}, TP{tp}): "
            f"{_library_error(exc)}"
        )
        raise BackendUnavailable(_REFUSED[key]) from exc
    passes = _PASSES.get(id(handle))
    if passes is None:
        passes = _PASSES[id(handle)] = AicPasses(handle, _max_context(hf_config))
    return KernelTimes(
        forward_ms=passes.forward_ms,
        owns_all_reduce=nvlink_tp and gpu_slug not in COMPUTE_ONLY,
        source=f"aiconfigurator-core {system} vllm tables",
    )
