"""The `vllm serve` arguments of a plan: the model reference and the flags every instance shares."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from catalog.generations import pre_ampere
from catalog.identifiers import to_name
from planner.engine.spec import PlanSpec

if TYPE_CHECKING:
    from planner.engine.configs.layout import BundleLayout


def _repo_name(spec: PlanSpec) -> str:
    """Return the repository's last part as a name (`Qwen/Qwen2.5-72B` -> `qwen2.5-72b`)."""
    return to_name(spec.hf_repo.rstrip("/").split("/")[-1])


MODELS_ROOT = "/models"  # where every host keeps the weights it serves (local disk, not NFS)


def operator_quantizes(spec: PlanSpec, dtype: str) -> bool:
    """Return True when the plan serves an int8/int4 checkpoint the operator must provide."""
    return dtype in ("int8", "int4") and not (spec.pre_quantized and spec.weight_dtype == dtype)


def model_ref(spec: PlanSpec, dtype: str) -> str:
    """Return the local path every host serves from.

    A repository is fetched once per host into /models/<name> (fetch-weights.sh, or the
    playbook), so no server downloads at start; a quantized checkpoint the operator makes is
    expected at /models/<name>-<dtype>; a local path in the spec is served as it is.
    """
    if operator_quantizes(spec, dtype):
        return f"{MODELS_ROOT}/{_repo_name(spec)}-{dtype}"
    if spec.hf_repo.startswith("/"):
        return spec.hf_repo
    return f"{MODELS_ROOT}/{_repo_name(spec)}"


def served_model_name(spec: PlanSpec) -> str:
    """Return the name clients put in `model` (the catalog slug, else the repository's name)."""
    return spec.model_slug or _repo_name(spec)


def serves_fp16_only(spec: PlanSpec, layout: BundleLayout) -> bool:
    """Return whether a bf16 checkpoint lands on GPUs below Ampere, which have no bf16: vLLM
    releases before the automatic fp16 fallback refuse to start there ("Bfloat16 is only
    supported on GPUs with compute capability of at least 8.0 ... --dtype=half")."""
    hosts = {host for replica in layout.hosts for host in replica}
    return spec.architecture.default_dtype == "bf16" and any(
        pre_ampere(node.gpu.slug) for node in spec.hardware.nodes if node.hostname in hosts
    )


def serve_args(spec: PlanSpec, layout: BundleLayout) -> tuple[str, ...]:
    """Return the flags every instance of this layout shares (after `vllm serve MODEL`)."""
    args = [
        "--tensor-parallel-size",
        str(layout.tp),
        "--pipeline-parallel-size",
        str(layout.pp),
        "--max-model-len",
        str(spec.max_model_len),
        "--gpu-memory-utilization",
        f"{spec.gpu_memory_utilization:g}",
        "--served-model-name",
        served_model_name(spec),
    ]
    if serves_fp16_only(spec, layout):
        args += ["--dtype", "half"]
    if layout.weight_dtype == "fp8" and not spec.pre_quantized:
        args += ["--quantization", "fp8"]
    if spec.kv_cache_dtype == "fp8":
        args += ["--kv-cache-dtype", "fp8"]
    if spec.rope_scaling_factor > 1.0:
        original = spec.architecture.max_position_embeddings
        rope = {
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": spec.rope_scaling_factor,
                "original_max_position_embeddings": original,
            }
        }
        args += ["--hf-overrides", json.dumps(rope, separators=(",", ":"))]
    if spec.max_num_seqs:
        args += ["--max-num-seqs", str(spec.max_num_seqs)]
    if spec.max_num_batched_tokens:
        args += ["--max-num-batched-tokens", str(spec.max_num_batched_tokens)]
    return tuple(args)


def emitted_flags(argvs: Iterable[Iterable[str]]) -> set[str]:
    """Return every --flag used in the given `vllm serve` argument vectors."""
    return {a for argv in argvs for a in argv if a.startswith("--")}
