"""Per-node `vllm serve` commands: one instance per node, mp multi-node, or the Ray backend."""

from __future__ import annotations

import json
import shlex
from typing import Any

from planner.engine.result import Candidate
from planner.engine.spec import PlanSpec

BASE_PORT = 8000
MASTER_PORT = 29501


def model_ref(spec: PlanSpec, dtype: str) -> str:
    """Return the checkpoint to serve (a placeholder when a quantized checkpoint is needed)."""
    if dtype in ("int8", "int4") and not (spec.pre_quantized and spec.weight_dtype == dtype):
        return f"<{dtype}-checkpoint-of-{spec.hf_repo}>"
    return spec.hf_repo


def serve_args(spec: PlanSpec, best: Candidate) -> list[str]:
    """Return the flags every instance of this plan shares."""
    args = [
        "--tensor-parallel-size",
        str(best.tp),
        "--pipeline-parallel-size",
        str(best.pp),
        "--max-model-len",
        str(spec.max_model_len),
        "--gpu-memory-utilization",
        f"{spec.gpu_memory_utilization:g}",
        "--served-model-name",
        spec.model_slug or spec.hf_repo.split("/")[-1].lower(),
    ]
    if best.weight_dtype == "fp8" and not spec.pre_quantized:
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
    return args


def vllm_commands(spec: PlanSpec, best: Candidate, backend: str) -> list[dict[str, Any]]:
    """Return one entry per process to start: host, role, env, argv and the shell line."""
    out: list[dict[str, Any]] = []
    model = model_ref(spec, best.weight_dtype)
    common = serve_args(spec, best)
    per_host: dict[str, int] = {}
    for r, hosts in enumerate(best.hosts):
        if best.nodes_per_replica == 1:
            host = hosts[0]
            slot = per_host.get(host, 0)
            per_host[host] = slot + 1
            gpus = best.gpus_per_replica
            devices = ",".join(str(slot * gpus + i) for i in range(gpus))
            argv = [
                "vllm",
                "serve",
                model,
                *common,
                "--host",
                "0.0.0.0",
                "--port",
                str(BASE_PORT + slot),
            ]
            env = {"CUDA_VISIBLE_DEVICES": devices}
            out.append(_entry(host, f"replica {r}", env, argv, port=BASE_PORT + slot))
            continue
        head = hosts[0]
        if backend == "ray":
            argv = [
                "vllm",
                "serve",
                model,
                *common,
                "--distributed-executor-backend",
                "ray",
                "--host",
                "0.0.0.0",
                "--port",
                str(BASE_PORT),
            ]
            out.append(
                _entry(
                    head,
                    f"replica {r} (Ray head; start the Ray cluster first)",
                    {},
                    argv,
                    port=BASE_PORT,
                )
            )
            continue
        for rank, host in enumerate(hosts):
            argv = [
                "vllm",
                "serve",
                model,
                *common,
                "--distributed-executor-backend",
                "mp",
                "--nnodes",
                str(len(hosts)),
                "--node-rank",
                str(rank),
                "--master-addr",
                head,
                "--master-port",
                str(MASTER_PORT),
            ]
            if rank == 0:
                argv += ["--host", "0.0.0.0", "--port", str(BASE_PORT)]
            else:
                argv += ["--headless"]
            role = f"replica {r} node-rank {rank}" + (" (API server)" if rank == 0 else "")
            out.append(_entry(host, role, {}, argv, port=BASE_PORT if rank == 0 else None))
    return out


def _entry(
    host: str, role: str, env: dict[str, str], argv: list[str], *, port: int | None
) -> dict[str, Any]:
    prefix = " ".join(f"{k}={v}" for k, v in env.items())
    line = (prefix + " " if prefix else "") + shlex.join(argv)
    return {"host": host, "role": role, "env": env, "argv": argv, "port": port, "command": line}


def emitted_flags(commands: list[dict[str, Any]]) -> set[str]:
    """Return every --flag used in the generated commands."""
    return {a for c in commands for a in c["argv"] if a.startswith("--")}
