"""The DOMAIN.md §6 checks that apply to a plan, each with severity and action."""

from __future__ import annotations

from collections.abc import Sequence

from planner.engine.assumptions import Assumptions
from planner.engine.messages import Code, Param, Term, message
from planner.engine.network import intra_node_link
from planner.engine.result import Candidate, Pitfall
from planner.engine.serving.predict import requests_in_load
from planner.engine.spec import Node, PlanSpec


def _pit(code: Code, severity: str, **params: Param) -> Pitfall:
    """Return the pitfall `code`; `params` fill its text and its action."""
    return Pitfall(message=message(code, **params), severity=severity)


def check_pitfalls(
    spec: PlanSpec,
    best: Candidate,
    nodes: Sequence[Node],
    *,
    route: str,
    backend: str,
    comm_ms: float,
    a: Assumptions,
) -> list[Pitfall]:
    """Return the pitfalls that apply, most severe first."""
    out: list[Pitfall] = []
    multi_node = len(nodes) > 1
    spans = best.nodes_per_replica > 1
    data_nics = [n.data_nic for n in nodes]
    nic = next((x.name for x in data_nics if x is not None), "eth0")
    ray = backend == "ray" or route == "C"
    image = spec.vllm_image
    if multi_node or spans:
        out.append(_pit(Code.PIT_NCCL_SOCKET_IFNAME, "high" if spans else "medium", nic=nic))
        kinds = {x.kind for x in data_nics if x is not None}
        if "roce" in kinds:
            out.append(_pit(Code.PIT_NCCL_ROCE_GID, "high", nic=nic))
        if spans and kinds <= {"ethernet"}:
            out.append(_pit(Code.PIT_NCCL_TCP, "medium"))
        out.append(_pit(Code.PIT_NCCL_DEBUG, "info"))
        for node in nodes:
            if node.data_nic is None:
                out.append(_pit(Code.PIT_NO_DATA_NIC, "high", hostname=node.hostname))
    if spans:
        out.append(_pit(Code.PIT_WEIGHTS_EVERY_NODE, "medium"))
        link = min((x.speed_gbps for x in data_nics if x is not None), default=1.0)
        if link < 10:
            out.append(_pit(Code.PIT_LINK_BELOW_10GBE, "high", link_gbps=link))
        if best.kind == "cross-node-tp" and link < 100:
            out.append(
                _pit(Code.PIT_SLOW_LINK_CROSS_TP, "high", link_gbps=link, comm_ms=round(comm_ms, 1))
            )
    if ray:
        gpn = max((n.usable_gpus for n in nodes), default=best.gpus_per_replica)
        head = min(nodes, key=lambda n: (n.usable_gpus, n.hostname)).hostname if nodes else ""
        out.append(_pit(Code.PIT_RAY_NUM_GPUS, "high", gpus_per_replica=best.gpus_per_replica))
        out.append(_pit(Code.PIT_RAY_VERSION, "medium", image=image))
        out.append(_pit(Code.PIT_RAY_START_NUM_GPUS, "medium", gpus_per_node=gpn))
        out.append(_pit(Code.PIT_RAY_HEAD_LIGHT, "low", head=head))
        out.append(_pit(Code.PIT_RAY_LOGS, "low"))
        out.append(_pit(Code.PIT_NNODES_WITH_RAY, "info"))
    if route == "C":
        weights = best.memory.weights_gib * best.gpus_per_replica
        cold = weights * 1.073741824 / a.cold_start_gbs
        out.append(
            _pit(
                Code.PIT_COLD_START,
                "high" if cold > 60 else "medium",
                weights_gib=round(weights, 1),
                cold_start_s=round(cold),
            )
        )
        out.append(_pit(Code.PIT_RAY_MAX_RESTARTS, "medium"))
    if spec.hardware.pool_kind == "shared" and spec.gpu_memory_utilization > 0.85:
        out.append(
            _pit(Code.PIT_GPU_UTIL_SHARED, "medium", pool_kind=Term(spec.hardware.pool_kind))
        )
    per_replica = spec.workload.concurrency / max(best.replicas, 1)
    if best.fits and best.max_concurrency_per_replica < per_replica:
        out.append(
            _pit(
                Code.PIT_LOW_KV_HEADROOM,
                "high",
                max_concurrency=round(best.max_concurrency_per_replica, 1),
                max_model_len=spec.max_model_len,
                per_replica=round(per_replica, 1),
            )
        )
    if best.weight_dtype in ("int8", "int4") and not (
        spec.pre_quantized and spec.weight_dtype == best.weight_dtype
    ):
        out.append(_pit(Code.PIT_NEEDS_QUANTIZED_CHECKPOINT, "high", dtype=best.weight_dtype))
    capped = _simulation_capped(spec, best)
    if capped is not None:
        out.append(capped)
    ring = _pcie_tp_ring(spec, best, nodes, a)
    if ring is not None:
        out.append(ring)
    out.append(_pit(Code.PIT_DOCKER_IPC, "medium"))
    out.append(_pit(Code.PIT_PIN_VERSIONS, "low", image=image))
    out.append(_pit(Code.PIT_PREFIX_CACHING, "info"))
    order = {"high": 0, "medium": 1, "low": 2, "info": 3}
    return sorted(out, key=lambda p: order[p.severity])


def _simulation_capped(spec: PlanSpec, best: Candidate) -> Pitfall | None:
    """Return the warning that the serving figures cover fewer requests than the load sends.

    The simulation's work is bounded (serving/simulate.py, simulation_bound): a load of long or
    many requests is simulated for its first requests only.
    """
    if best.serving is None:
        return None
    requested = requests_in_load(spec.workload, best.replicas)
    simulated = best.serving.requests_simulated
    if simulated >= requested:
        return None
    return _pit(Code.PIT_SIMULATION_CAPPED, "medium", simulated=simulated, requested=requested)


def _pcie_tp_ring(
    spec: PlanSpec, best: Candidate, nodes: Sequence[Node], a: Assumptions
) -> Pitfall | None:
    """Return the warning that a TP group rings over 3+ PCIe GPUs at the default bandwidth.

    Published nccl-tests over such rings spread twentyfold (bench/pcie_rings.py), more than any
    other term of the step, so the team's own measurement is worth asking for.
    """
    measured = spec.network.intra_node_bandwidth_gbs is not None
    if best.tp < 3 or best.kind == "cross-node-tp" or not nodes or measured:
        return None
    link = intra_node_link(nodes[0], a, spec.network, ring=best.tp)
    if link.kind != "pcie":
        return None
    return _pit(Code.PIT_PCIE_TP_RING, "medium", tp=best.tp, bandwidth_gbs=link.bandwidth_gbs)
