"""Assemble every launch artifact for a recommendation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.engine.configs.docker import docker_lines
from planner.engine.configs.env import env_file
from planner.engine.configs.nginx import endpoints_of, nginx_config
from planner.engine.configs.ray import ray_start_commands
from planner.engine.configs.serve import serve_config, serve_yaml
from planner.engine.configs.serve_app import serve_app_module
from planner.engine.configs.vllm import model_ref, vllm_commands
from planner.engine.configs.vllm_flags import SOURCE, VLLM_VERSION
from planner.engine.result import Candidate
from planner.engine.spec import Node, PlanSpec


def build_configs(
    spec: PlanSpec, best: Candidate, nodes: Sequence[Node], *, route: str, backend: str
) -> dict[str, Any]:
    """Return vllm/ray/nginx/serve/env/docker artifacts and an operator README."""
    names = {h for hs in best.hosts for h in hs}
    used = [n for n in nodes if n.hostname in names] or list(nodes[:1])
    commands = vllm_commands(spec, best, "ray" if route == "B" and backend == "ray" else "mp")
    endpoints = endpoints_of(commands)
    ray_lines = ray_start_commands(used) if backend == "ray" else []
    nginx = nginx_config(endpoints) if len(endpoints) > 1 else ""
    serve_dict = serve_config(spec, best, model_ref(spec, best.weight_dtype))
    configs: dict[str, Any] = {
        "vllm_version": VLLM_VERSION,
        "vllm_flags_source": SOURCE,
        "vllm_serve": commands,
        "ray_start": ray_lines,
        "nginx_conf": nginx,
        "serve_yaml": serve_yaml(serve_dict) if route == "C" else "",
        "serve_config": serve_dict if route == "C" else None,
        "serve_app_py": serve_app_module() if route == "C" else "",
        "env_file": env_file(used, multi_node=len(used) > 1),
        "docker_run": docker_lines(commands, spec.vllm_image, ray_lines),
    }
    configs["readme"] = _readme(spec, best, route, backend, configs)
    return configs


def _readme(
    spec: PlanSpec, best: Candidate, route: str, backend: str, configs: dict[str, Any]
) -> str:
    steps = [
        f"# Deploying {spec.model_name} ({best.weight_dtype}) — route {route}",
        "",
        f"Layout: TP{best.tp} × PP{best.pp} × {best.replicas} replica(s) on {best.gpu}; "
        f"executor backend `{backend}`; image `{spec.vllm_image}` (pin it on every node).",
        "",
        "1. Copy the weights to the same local path on every node (NFS can stall loading).",
        "2. Put `.env` beside the compose/docker files on every node.",
    ]
    n = 3
    if configs["ray_start"]:
        steps.append(f"{n}. Start Ray: the head first, then each worker (explicit --num-gpus).")
        n += 1
    steps.append(
        f"{n}. Start vLLM on each host as listed in `vllm_serve` (or the `docker_run` lines); "
        "wait for `Application startup complete` and check `GPU KV cache size` in the log "
        f"(planned: {best.kv_tokens_per_replica} tokens per replica)."
    )
    n += 1
    if configs["nginx_conf"]:
        steps.append(
            f"{n}. Install the Nginx snippet in conf.d/, run `nginx -t`, reload; "
            "point clients at the balancer."
        )
        n += 1
    if configs["serve_yaml"]:
        steps.append(
            f"{n}. Put `serveplan_vllm_app.py` on every Ray node's PYTHONPATH, then "
            "`serve deploy serve.yaml` (each replica starts one vLLM server on its TP×PP GPUs; "
            "keep num_gpus equal to TP×PP and min_replicas ≥ 1)."
        )
        n += 1
    steps += [
        f"{n}. Record start-up time, TTFT, inter-token latency and completion rate under load, "
        "then run a failure drill (stop one worker, time until the next successful request).",
        "",
    ]
    return "\n".join(steps)
