"""Enumerate layouts (TP × PP × replicas) on the offered nodes and evaluate each one."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from catalog.data import load_models
from catalog.generations import pre_ampere
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.memory import (
    MemoryResult,
    default_batched_tokens,
    plan_memory,
)
from planner.engine.memory.room import with_room_hint
from planner.engine.messages import Code, message
from planner.engine.network import (
    Link,
    cross_node_tp_link,
    custom_all_reduce_applies,
    inter_node_link,
    intra_node_link,
    nic_key,
)
from planner.engine.result import Candidate, MemoryBreakdown, ranked
from planner.engine.serving import build_context
from planner.engine.serving.backend import BackendChoice, KernelTimes, resolve_kernels
from planner.engine.serving.host import (
    EngineEra,
    default_v0_batched_tokens,
    engine_era,
)
from planner.engine.spec import Layout, Node, PlanSpec, Workload, valid_tp_sizes
from planner.engine.throughput import Perf, estimate

_INTRA_RANK = {"nvswitch": 0, "nvlink": 1, "pcie": 2}
PP_SIZES = (1, 2, 3, 4, 6, 8)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroup:
    """Nodes with one GPU type, best first (fastest data link, NVLink, most usable GPUs)."""

    gpu_slug: str
    nodes: tuple[Node, ...]
    gpus_per_node: int
    usable: tuple[int, ...]
    nic_keys: dict[str, tuple[float, str]]


def group_nodes(nodes: Sequence[Node]) -> list[NodeGroup]:
    """Return the offered nodes grouped by GPU type, each group sorted best-first."""
    groups: dict[str, list[Node]] = defaultdict(list)
    for node in nodes:
        if node.usable_gpus > 0:
            groups[node.gpu.slug].append(node)

    def key(n: Node) -> tuple[float, int, int, str]:
        nic = n.data_nic
        return (
            -(nic.speed_gbps if nic else 0.0),
            _INTRA_RANK.get(n.intra_link, 3),
            -n.usable_gpus,
            n.hostname,
        )

    out = []
    for slug, ns in groups.items():
        ordered = tuple(sorted(ns, key=key))
        usable = tuple(n.usable_gpus for n in ordered)
        out.append(
            NodeGroup(
                gpu_slug=slug,
                nodes=ordered,
                gpus_per_node=max(usable),
                usable=usable,
                nic_keys={n.hostname: nic_key(n) for n in ordered},
            )
        )
    return out


def spec_assumptions(spec: PlanSpec, a: Assumptions) -> Assumptions:
    """Return `a` with the figures the spec measured itself (the communication overlap)."""
    if spec.network.overlap_factor is None:
        return a
    return replace(a, overlap_factor=spec.network.overlap_factor)


def _shape(tp: int, pp: int, g: int) -> tuple[str, int] | None:
    """Return (kind, nodes per replica) of TP×PP on nodes of g GPUs, or None if impossible."""
    gpus = tp * pp
    if gpus <= g:
        return ("single-gpu" if gpus == 1 else "intra-node"), 1
    if tp <= g and g % tp == 0:
        stages_per_node = g // tp
        return "cross-node-pp", math.ceil(pp / stages_per_node)
    if tp > g and tp % g == 0 and pp == 1:
        return "cross-node-tp", tp // g
    return None


def evaluate(
    spec: PlanSpec,
    group: NodeGroup,
    layout: Layout,
    *,
    dtype: str,
    a: Assumptions,
    pinned: bool = False,
    fill_nodes: bool = True,
) -> Candidate | None:
    """Return the evaluated candidate for `layout`; replicas are chosen unless pinned."""
    tp, pp = layout.tp, layout.pp
    shape = _shape(tp, pp, group.gpus_per_node)
    if shape is None:
        return None
    kind, nodes_per_replica = shape
    gpu = group.nodes[0].gpu
    mem = _replica_memory(spec, group, tp, pp, kind, dtype=dtype, a=a)
    wanted = layout.replicas if pinned else _replicas_needed(spec.workload, mem)
    if kind in ("single-gpu", "intra-node"):
        hosts, used = _place_in_nodes(
            group, tp * pp, wanted if pinned else 1, fill=not pinned and fill_nodes, needed=wanted
        )
    else:
        hosts, used = _place_across_nodes(group, tp * pp, nodes_per_replica, wanted)
    replicas = len(hosts)
    placeable = replicas >= (layout.replicas if pinned else 1)
    if replicas == 0:
        replicas = max(layout.replicas if pinned else 1, 1)
    used = used or list(group.nodes[:1])
    tp_link, pp_link = _links(
        spec, group, used, kind, a, tp * pp // max(nodes_per_replica, 1), tp=tp
    )
    visible = gpu.driver_visible_gib
    kernels, backend = _kernels(spec, gpu.slug, tp, dtype, tp_link)
    ctx = build_context(
        spec.architecture,
        gpu,
        mem,
        tp=tp,
        pp=pp,
        tp_link=tp_link,
        pp_link=pp_link,
        dtype=dtype,
        max_num_seqs=mem.profiled_seqs,
        max_num_batched_tokens=spec.max_num_batched_tokens
        or _default_tokens(spec, visible, gpu.slug, a),
        a=a,
        overlap=a.overlap_factor,
        kernels=kernels,
        backend=backend,
        vllm_version=spec.vllm_version,
        max_model_len=spec.max_model_len,
    )
    wl = spec.workload
    # A layout whose memory does not fit never starts: it has no speeds to rank or show (its
    # steady state holds ~1e-9 sequences and read TTFT ~1e14 ms).
    perf = (
        estimate(ctx, wl, replicas=replicas, balancer_efficiency=a.balancer_efficiency)
        if mem.fits
        else None
    )
    reason = mem.reason
    if not placeable:
        reason = message(Code.REJECT_ROOM, replicas=layout.replicas, gpus=tp * pp, room=len(hosts))
    fits = mem.fits and placeable
    total_conc = mem.max_concurrency * replicas
    serves = fits and total_conc + 1e-9 >= wl.concurrency
    return Candidate(
        id=f"{group.gpu_slug}:tp{tp}-pp{pp}-r{replicas}:{dtype}" + (":pinned" if pinned else ""),
        tp=tp,
        pp=pp,
        replicas=replicas,
        nodes_per_replica=nodes_per_replica,
        gpus_per_replica=tp * pp,
        kind=kind,
        weight_dtype=dtype,
        gpu=group.gpu_slug,
        hosts=tuple(hosts),
        memory=_breakdown(mem),
        kv_tokens_per_replica=mem.kv_tokens,
        max_concurrency_per_replica=mem.max_concurrency,
        max_concurrency_total=total_conc,
        tp_link=tp_link.label,
        pp_link=pp_link.label if pp > 1 else "",
        **_speeds(perf),
        fits=fits,
        serves_load=serves,
        rejected_reason=reason,
        score=0.0,
        pinned=pinned,
        serving_context=perf.context if perf else None,
    )


def _speeds(perf: Perf | None) -> dict[str, Any]:
    """Return a candidate's speed figures (all None for a layout whose memory does not fit).

    A layout that fits but cannot be placed keeps them: what it would deliver once placed.
    """
    return {
        "comm_per_decode_step_ms": perf.decode_comm_ms if perf else None,
        "pp_comm_per_decode_step_ms": perf.decode_pp_comm_ms if perf else None,
        "comm_per_prefill_ms": perf.prefill_comm_ms if perf else None,
        "decode_step_ms": perf.decode_step_ms if perf else None,
        "decode_compute_ms": perf.decode_compute_ms if perf else None,
        "itl_ms": perf.itl_ms if perf else None,
        "ttft_ms": perf.ttft_ms if perf else None,
        "batch_per_replica": perf.batch_per_replica if perf else None,
        "output_throughput_tok_s": perf.output_tok_s if perf else None,
        "total_throughput_tok_s": perf.total_tok_s if perf else None,
        "capacity_output_tok_s": perf.capacity_output_tok_s if perf else None,
    }


def _era(spec: PlanSpec, gpu_slug: str) -> EngineEra:
    return engine_era(spec.vllm_version, pre_ampere=pre_ampere(gpu_slug))


def _default_tokens(spec: PlanSpec, visible_gib: float, gpu_slug: str, a: Assumptions) -> int:
    """Return the max_num_batched_tokens the planned vLLM version starts with when none is set."""
    v0 = default_v0_batched_tokens(_era(spec, gpu_slug), spec.max_model_len)
    if v0 is not None:
        return v0
    return default_batched_tokens(visible_gib, gpu_slug, a, spec.vllm_version)


def _replica_memory(
    spec: PlanSpec, group: NodeGroup, tp: int, pp: int, kind: str, *, dtype: str, a: Assumptions
) -> MemoryResult:
    """Return the memory plan of one replica's GPUs (weights, activations, KV cache); one that
    leaves no KV cache says which setting would (memory/room.py)."""
    gpu = group.nodes[0].gpu

    def replan(
        *,
        max_num_seqs: int | None = spec.max_num_seqs,
        utilization: float = spec.gpu_memory_utilization,
    ) -> MemoryResult:
        return plan_memory(
            spec.architecture,
            dtype=dtype,
            kv_cache_dtype=spec.kv_cache_dtype,
            tp=tp,
            pp=pp,
            visible_gib=gpu.driver_visible_gib,
            gpu_slug=gpu.slug,
            utilization=utilization,
            max_model_len=spec.max_model_len,
            max_num_batched_tokens=spec.max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            a=a,
            vllm_version=spec.vllm_version,
            custom_all_reduce=custom_all_reduce_applies(group.nodes[0], tp, kind),
            vendor=gpu.vendor,
        )

    return with_room_hint(
        replan(),
        utilization=spec.gpu_memory_utilization,
        replan=replan,
    )


def _replicas_needed(wl: Workload, mem: MemoryResult) -> int:
    """Return how many replicas hold the target concurrency (one when none fits)."""
    if mem.max_concurrency <= 0:
        return 1
    return max(1, math.ceil(wl.concurrency / max(mem.max_concurrency, 1e-9)))


def _eligible(group: NodeGroup, per_node_need: int) -> Iterator[tuple[Node, int]]:
    """Lazily walk the best-first nodes with room for `per_node_need` GPUs and their usable GPUs.

    A 10,000-machine fleet is never copied per candidate.
    """
    return ((n, u) for n, u in zip(group.nodes, group.usable, strict=True) if u >= per_node_need)


def _place_in_nodes(
    group: NodeGroup, gpus: int, target: int, *, fill: bool, needed: int
) -> tuple[list[tuple[str, ...]], list[Node]]:
    """Return the hosts of replicas that live inside one node, and the nodes used.

    Filling packs every node with replicas until the load is held, on two nodes at least when
    two can host them (DOMAIN.md §3); otherwise `target` replicas are placed.
    """
    hosts: list[tuple[str, ...]] = []
    used: list[Node] = []
    for i, (node, u) in enumerate(_eligible(group, gpus)):
        if fill:
            if len(hosts) >= needed and i >= 2:
                break
            hosts.extend((node.hostname,) for _ in range(u // gpus))
            used.append(node)
            continue
        take = min(u // gpus, target - len(hosts))
        hosts.extend((node.hostname,) for _ in range(take))
        used.append(node)
        if len(hosts) >= target:
            break
    return hosts, used


def _place_across_nodes(
    group: NodeGroup, gpus: int, nodes_per_replica: int, target: int
) -> tuple[list[tuple[str, ...]], list[Node]]:
    """Return the hosts of up to `target` replicas spanning `nodes_per_replica` nodes each."""
    hosts: list[tuple[str, ...]] = []
    used: list[Node] = []
    chunk: list[Node] = []
    for node, _ in _eligible(group, min(gpus, group.gpus_per_node)):
        chunk.append(node)
        if len(chunk) == nodes_per_replica:
            hosts.append(tuple(n.hostname for n in chunk))
            used.extend(chunk)
            chunk = []
            if len(hosts) >= target:
                break
    return hosts, used


def _kernels(
    spec: PlanSpec, gpu_slug: str, tp: int, dtype: str, tp_link: Link
) -> tuple[KernelTimes | None, BackendChoice]:
    """Return the measured kernel times the spec's step backend gives a replica (None: roofline)."""
    catalog_model = load_models().get(spec.model_slug)
    return resolve_kernels(
        spec.step_backend,
        hf_config=catalog_model.config if catalog_model else None,
        gpu_slug=gpu_slug,
        tp=tp,
        dtype=dtype,
        kv_cache_dtype=spec.kv_cache_dtype,
        tp_link_kind=tp_link.kind,
    )


def _links(
    spec: PlanSpec,
    group: NodeGroup,
    used: list[Node],
    kind: str,
    a: Assumptions,
    gpus_per_node: int,
    *,
    tp: int,
) -> tuple[Link, Link]:
    """Return the links the TP and the PP traffic of a replica cross (`gpus_per_node`: the
    replica's GPUs on each of its nodes; a TP group rings over at most those)."""
    intra = intra_node_link(used[0], a, spec.network, ring=min(tp, gpus_per_node))
    inter = (
        inter_node_link(used, a, spec.network, keys=[group.nic_keys[n.hostname] for n in used])
        if len(used) > 1
        else intra
    )
    if kind == "cross-node-tp":
        if spec.network.per_call_latency_us is None:  # a measured latency is the whole call's
            inter = cross_node_tp_link(inter, intra, gpus_per_node)
        return inter, inter
    if kind == "cross-node-pp":
        return intra, inter
    return intra, intra


def _breakdown(mem: MemoryResult) -> MemoryBreakdown:
    """Return the memory figures of the replica's fullest GPU, in GiB."""
    worst = mem.worst
    return MemoryBreakdown(
        visible_gib=worst.visible_bytes / GIB,
        requested_gib=worst.requested_bytes / GIB,
        weights_gib=max(s.weights_bytes for s in mem.stages) / GIB,
        activation_peak_gib=worst.activation_bytes / GIB,
        non_torch_gib=worst.non_torch_bytes / GIB,
        cuda_graph_gib=worst.cuda_graph_bytes / GIB,
        kv_budget_gib=max(worst.kv_budget_bytes, 0.0) / GIB,
        free_gib=(worst.visible_bytes - worst.requested_bytes) / GIB,
        kv_bytes_per_token=worst.kv_bytes_per_token,
        stage_weights_gib=tuple(s.weights_bytes / GIB for s in mem.stages),
        stage_layers=tuple(s.layers for s in mem.stages),
        kv_groups=worst.kv_groups,
        blocks_per_request=worst.blocks_per_request,
    )


def enumerate_candidates(
    spec: PlanSpec, group: NodeGroup, *, dtype: str, a: Assumptions
) -> list[Candidate]:
    """Return every sensible layout on this node group, evaluated."""
    arch = spec.architecture
    g = group.gpus_per_node
    total = sum(group.usable)
    out: list[Candidate] = []
    for tp in valid_tp_sizes(arch, min(total, 64)):
        if not (g % tp == 0 or tp % g == 0):
            continue
        for pp in PP_SIZES:
            if pp > arch.num_layers or tp * pp > total:
                continue
            shape = _shape(tp, pp, g)
            if shape is None:
                continue
            kind, npr = shape
            if npr > len(group.nodes):
                continue
            if kind == "cross-node-pp" and tp * pp % g:
                continue
            cand = evaluate(spec, group, Layout(tp=tp, pp=pp), dtype=dtype, a=a)
            if cand is None:
                continue
            out.append(cand)
            if cand.replicas > 1 and kind in ("single-gpu", "intra-node"):
                single = evaluate(
                    spec,
                    group,
                    Layout(tp=tp, pp=pp),
                    dtype=dtype,
                    a=a,
                    fill_nodes=False,
                )
                if single is not None:
                    out.append(single)
    return out


def score_candidates(spec: PlanSpec, cands: list[Candidate]) -> list[Candidate]:
    """Return candidates with scores (0–100), best first.

    Score = output throughput at the workload relative to the best fitting layout, halved when
    the layout cannot hold the target concurrency, ×0.9 when a replica spans nodes (shared
    failure domain, network dependence), ×0.6 per missed SLO; 0 when it does not fit.
    """
    best = max((ranked(c.output_throughput_tok_s) for c in cands if c.fits), default=0.0)
    wl = spec.workload
    scored = []
    for c in cands:
        if not c.fits or best <= 0:
            scored.append(replace(c, score=0.0))
            continue
        s = 100.0 * ranked(c.output_throughput_tok_s) / best
        if not c.serves_load:
            s *= 0.5
        if c.spans_nodes:
            s *= 0.9
        if wl.ttft_slo_ms is not None and ranked(c.ttft_ms) > wl.ttft_slo_ms:
            s *= 0.6
        if wl.itl_slo_ms is not None and ranked(c.itl_ms) > wl.itl_slo_ms:
            s *= 0.6
        scored.append(replace(c, score=s))
    top = max((c.score for c in scored), default=0.0)
    if top > 0:
        scored = [replace(c, score=round(100.0 * c.score / top, 1)) for c in scored]
    scored.sort(key=lambda c: (-c.score, c.nodes_per_replica, -c.replicas, c.tp * c.pp, c.id))
    return scored
