"""A pool's Route A allocation: one vLLM server per placed instance, on exactly the GPUs the pool
plan gave it, and one LiteLLM proxy that routes each request to its model's servers.

The pool plan fixes every instance's host and GPU indices (PlacedModel.instances); this module
only numbers the ports (one API port per server on a host, across models) and names the
processes, so that table_clashes can prove no GPU or port is claimed twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.engine.configs.allocate import (
    API_PORT,
    gpu_exporters,
    host_rows,
    nodes_by_name,
    service,
    vllm_process,
)
from planner.engine.configs.allocation import AllocationTable, Process, ProcessKind
from planner.engine.configs.layout import BundleLayout
from planner.engine.configs.vllm import model_ref, serve_args
from planner.engine.result import Backend, Route
from planner.engine.spec import Node, PlanSpec

# LiteLLM proxy's default port (docs.litellm.ai, proxy quick start: "running on :4000").
ROUTER_PORT = 4000
LITELLM_CONFIG_FILE = "litellm.yaml"


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolDeployment:
    """One placed model of a pool: its spec, its layout and the GPUs of every instance."""

    name: str  # the pool's name for the model: process names use it
    spec: PlanSpec
    layout: BundleLayout  # layout.hosts[r] is instance r's host
    gpu_indices: tuple[tuple[int, ...], ...]  # instance r's GPUs on its host, as planned
    # Its instances share their GPU with another model's: each claims its memory share of it.
    shares_gpus: bool = False


def allocate_pool(models: Sequence[PoolDeployment], nodes: Sequence[Node]) -> AllocationTable:
    """Return the Route A table of a pool: every instance where the plan put it, one router."""
    names = [m.name for m in models]
    if not models or len(set(names)) != len(names):
        raise ValueError(f"pool model names must be unique: {names}")
    hosts = tuple(dict.fromkeys(h for m in models for h in m.layout.host_names))
    by_name = nodes_by_name(hosts, nodes)
    procs: dict[str, list[Process]] = {h: [] for h in hosts}
    slot_of: dict[str, int] = {}
    for m in models:
        if len(m.gpu_indices) != len(m.layout.hosts) or m.layout.spans_nodes:
            raise ValueError(f"{m.name}: one host and one GPU set per single-node instance")
        model = model_ref(m.spec, m.layout.weight_dtype)
        common = serve_args(m.spec, m.layout)
        share = m.spec.gpu_memory_utilization if m.shares_gpus else 1.0
        for r, ((host,), gpus) in enumerate(zip(m.layout.hosts, m.gpu_indices, strict=True)):
            port = API_PORT + slot_of.get(host, 0)
            slot_of[host] = slot_of.get(host, 0) + 1
            name = f"vllm-{m.name}-r{r}"
            procs[host].append(
                vllm_process(
                    host,
                    name,
                    (model, *common),
                    gpus=gpus,
                    port=port,
                    replica=r,
                    gpu_share=share,
                )
            )
    router = hosts[0]
    argv = ("litellm", "--config", LITELLM_CONFIG_FILE, "--host", "0.0.0.0")
    procs[router].append(
        service(
            router,
            ProcessKind.ROUTER,
            ROUTER_PORT,
            name="router",
            argv=(*argv, "--port", str(ROUTER_PORT)),
        )
    )
    gpu_exporters(procs)
    return AllocationTable(route=Route.A, backend=Backend.MP, hosts=host_rows(procs, by_name))
