"""The recommended candidate's bundle, as the plan result's `configs` section."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

import yaml

from planner.engine.configs.allocation import BundleClash, Process, ProcessKind
from planner.engine.configs.bundle import Bundle, build_bundle
from planner.engine.configs.layout import BundleLayout, Variant
from planner.engine.configs.scripts import env_words
from planner.engine.configs.serve_app import SERVE_APP_MODULE
from planner.engine.result import Backend, Candidate, Route
from planner.engine.spec import Node, PlanSpec
from planner.engine.vllm_flags import SOURCE, VLLM_VERSION


def build_configs(
    spec: PlanSpec, best: Candidate, nodes: Sequence[Node], *, route: Route, backend: Backend
) -> dict[str, Any]:
    """Return the recommended bundle: its files, allocation table and steps, plus the commands
    by kind (`vllm_serve`, `ray_start`, `serve_config`) for the result page and the API."""
    base: dict[str, Any] = {"vllm_version": VLLM_VERSION, "vllm_flags_source": SOURCE}
    try:
        bundle = build_bundle(
            spec, BundleLayout.from_candidate(best), nodes, Variant(Route(route), Backend(backend))
        )
    except BundleClash as exc:
        return {**base, **empty_configs(), "refused": [str(c) for c in exc.clashes]}
    return {**base, **configs_of(bundle)}


def empty_configs() -> dict[str, Any]:
    """Return the configs section of a plan without a bundle (nothing fits, or it clashed)."""
    return {
        "vllm_serve": [],
        "ray_start": [],
        "nginx_conf": "",
        "serve_yaml": "",
        "serve_config": None,
        "serve_app_py": "",
        "env_file": "",
        "bundle": None,
        "refused": [],
    }


def configs_of(bundle: Bundle) -> dict[str, Any]:
    """Return a bundle as the result's configs section."""
    files = bundle.file_map()
    vllm = [
        {
            "host": p.host,
            "role": p.name,
            "env": p.env_map,
            "argv": list(p.argv),
            "port": p.ports[0] if p.kind is ProcessKind.VLLM else None,
            "command": _command(p),
        }
        for p in bundle.table.processes
        if p.kind in (ProcessKind.VLLM, ProcessKind.VLLM_HEADLESS)
    ]
    ray = [
        {
            "host": p.host,
            "role": "head" if p.kind is ProcessKind.RAY_HEAD else "worker",
            "argv": list(p.argv),
            "env": p.env_map,
            "command": _command(p),
        }
        for p in bundle.table.processes
        if p.kind in (ProcessKind.RAY_HEAD, ProcessKind.RAY_WORKER)
    ]
    serve_text = files.get("serve.yaml", "")
    return {
        "vllm_serve": vllm,
        "ray_start": ray,
        "nginx_conf": files.get("nginx.conf", ""),
        "serve_yaml": serve_text,
        "serve_config": yaml.safe_load(serve_text) if serve_text else None,
        "serve_app_py": files.get(f"{SERVE_APP_MODULE}.py", ""),
        "env_file": files.get(".env", ""),
        "bundle": bundle.to_dict(),
        "refused": [],
    }


def _command(p: Process) -> str:
    """Return the process's shell line (environment, then the quoted argv)."""
    return " ".join(part for part in (env_words(p.env), shlex.join(p.argv)) if part)
