"""Reading the hardware of a spec: GPUs (catalog slugs or figures), nodes, NICs, the pool kind and
measured network figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog import identifiers
from catalog.bounds import (
    GPU_BANDWIDTH_GBS_MAX,
    GPU_MEMORY_GIB_MAX,
    GPU_TFLOPS_MAX,
    GPUS_PER_NODE_MAX,
    NIC_SPEED_GBPS_MAX,
)
from catalog.data import GpuVendor, load_gpus
from planner.engine.spec.reader import Reader
from planner.engine.spec.values import (
    INTRA_LINKS,
    MAX_NODES,
    NIC_KINDS,
    NIC_ROLES,
    POOL_KINDS,
    GpuSpec,
    Hardware,
    NetworkOverrides,
    Nic,
    Node,
)


def read_gpu(r: Reader, raw: Any, path: str) -> GpuSpec | None:
    gpus = load_gpus()
    if isinstance(raw, str):
        raw = {"slug": raw}
    if not isinstance(raw, Mapping):
        r.errors[path] = "must be a GPU slug or an object with the GPU figures"
        return None
    base = gpus.get(str(raw.get("slug", "")))
    if base is None and "memory_gib" not in raw:
        r.errors[f"{path}.slug"] = (
            f"unknown GPU slug {raw.get('slug')!r}; known: {', '.join(sorted(gpus))}"
        )
        return None
    mem = r.number(
        raw,
        "memory_gib",
        f"{path}.memory_gib",
        gt=0,
        le=GPU_MEMORY_GIB_MAX,
        default=base.memory_gib if base else None,
    )
    if mem is None:
        r.errors[f"{path}.memory_gib"] = f"required, a number in (0, {GPU_MEMORY_GIB_MAX:g}]"
        return None
    visible_default = base.driver_visible_gib if base else round(mem * 0.99, 2)
    visible = r.number(
        raw,
        "driver_visible_gib",
        f"{path}.driver_visible_gib",
        gt=0,
        le=GPU_MEMORY_GIB_MAX,
        default=visible_default,
    )
    hbm = r.number(
        raw,
        "hbm_bandwidth_gbs",
        f"{path}.hbm_bandwidth_gbs",
        gt=0,
        le=GPU_BANDWIDTH_GBS_MAX,
        default=base.hbm_bandwidth_gbs if base else 1000.0,
    )
    tflops = r.number(
        raw,
        "bf16_dense_tflops",
        f"{path}.bf16_dense_tflops",
        gt=0,
        le=GPU_TFLOPS_MAX,
        default=base.bf16_dense_tflops if base else 100.0,
    )
    nvlink = raw.get("nvlink_gbs", base.nvlink_gbs if base else 0.0)
    if (
        isinstance(nvlink, bool)
        or not isinstance(nvlink, int | float)
        or not 0 <= nvlink <= GPU_BANDWIDTH_GBS_MAX
    ):
        r.errors[f"{path}.nvlink_gbs"] = (
            f"must be a number in [0, {GPU_BANDWIDTH_GBS_MAX:g}] (0 for PCIe-only)"
        )
        nvlink = 0.0
    vendor_raw = raw.get("vendor", base.vendor if base else GpuVendor.NVIDIA)
    try:
        vendor = GpuVendor(vendor_raw)
    except ValueError:
        known = ", ".join(v.value for v in GpuVendor)
        r.errors[f"{path}.vendor"] = f"unknown GPU vendor {vendor_raw!r}; known: {known}"
        vendor = GpuVendor.NVIDIA
    return GpuSpec(
        slug=str(raw.get("slug", base.slug if base else "custom")),
        name=str(raw.get("name", base.name if base else raw.get("slug", "custom GPU"))),
        memory_gib=mem,
        driver_visible_gib=visible or mem * 0.99,
        hbm_bandwidth_gbs=hbm or 1000.0,
        bf16_dense_tflops=tflops or 100.0,
        fp8_support=bool(raw.get("fp8_support", base.fp8_support if base else False)),
        nvlink_gbs=float(nvlink),
        vendor=vendor,
    )


def read_nodes(r: Reader, hw: Mapping[str, Any]) -> tuple[Node, ...]:
    raw_nodes = hw.get("nodes")
    if raw_nodes is None and "node_count" in hw:
        n_nodes = r.integer(hw, "node_count", "hardware.node_count", 1, MAX_NODES, 1) or 1
        nic = {
            "name": hw.get("data_nic", "eth0"),
            "speed_gbps": hw.get("inter_node_gbps", 25),
            "kind": hw.get("inter_node_kind", "ethernet"),
            "role": "data",
        }
        template = {
            "gpu": hw.get("gpu"),
            "gpu_count": hw.get("gpus_per_node"),
            "intra_link": hw.get("intra_link", "nvlink"),
            "nics": [nic],
        }
        if "free_gpus_per_node" in hw:
            template["free_gpus"] = hw["free_gpus_per_node"]
        if "p2p" in hw:
            template["p2p"] = hw["p2p"]
        raw_nodes = [dict(template, hostname=f"node-{i + 1}") for i in range(n_nodes)]
    if not isinstance(raw_nodes, list) or not 1 <= len(raw_nodes) <= MAX_NODES:
        r.errors["hardware.nodes"] = f"a list of 1 to {MAX_NODES} nodes is required"
        return ()
    nodes: list[Node] = []
    seen: set[str] = set()
    gpu_cache: dict[str, GpuSpec | None] = {}
    for i, raw in enumerate(raw_nodes):
        path = f"hardware.nodes[{i}]"
        if not isinstance(raw, Mapping):
            r.errors[path] = "must be an object"
            continue
        hostname = str(raw.get("hostname") or f"node-{i + 1}")
        if not identifiers.is_hostname(hostname):
            r.errors[f"{path}.hostname"] = (
                f"{hostname!r} is not an RFC 1123 host name (labels of 1-63 letters, digits or "
                "hyphens separated by dots, 253 characters at most)"
            )
        elif hostname in seen:
            r.errors[f"{path}.hostname"] = f"duplicate hostname {hostname!r}"
        seen.add(hostname)
        address = str(raw.get("address") or raw.get("management_address") or "")
        if address and not identifiers.is_address(address):
            r.errors[f"{path}.address"] = (
                f"{address!r} must be an IPv4/IPv6 address or an RFC 1123 host name"
            )
        graw = raw.get("gpu")
        key = graw if isinstance(graw, str) else None
        if key is not None and key in gpu_cache:
            gpu = gpu_cache[key]
        else:
            gpu = read_gpu(r, graw, f"{path}.gpu")
            if key is not None:
                gpu_cache[key] = gpu
        count: int | None = r.integer(
            raw, "gpu_count", f"{path}.gpu_count", 1, GPUS_PER_NODE_MAX, None
        )
        if count is None:
            r.errors.setdefault(
                f"{path}.gpu_count", f"required, an integer between 1 and {GPUS_PER_NODE_MAX}"
            )
        link = r.choice(raw, "intra_link", f"{path}.intra_link", INTRA_LINKS, "nvlink")
        nics: list[Nic] = []
        raw_nics = raw.get("nics") or []
        if not isinstance(raw_nics, list):
            r.errors[f"{path}.nics"] = "must be a list of NIC objects"
            raw_nics = []
        for j, nraw in enumerate(raw_nics):
            npath = f"{path}.nics[{j}]"
            if not isinstance(nraw, Mapping):
                r.errors[npath] = "must be an object"
                continue
            speed = r.number(
                nraw, "speed_gbps", f"{npath}.speed_gbps", gt=0, le=NIC_SPEED_GBPS_MAX, default=None
            )
            if speed is None:
                r.errors.setdefault(
                    f"{npath}.speed_gbps", f"required, a number in (0, {NIC_SPEED_GBPS_MAX:g}]"
                )
                continue
            nic_name = str(nraw.get("name") or f"eth{j}")
            if not identifiers.is_interface_name(nic_name):
                r.errors[f"{npath}.name"] = (
                    f"{nic_name!r} is not an interface name: 1-15 letters, digits, '.', '_', "
                    "':', '@' or '-' (as in eth1, ens3f0, ib0)"
                )
                continue
            nics.append(
                Nic(
                    name=nic_name,
                    speed_gbps=speed,
                    kind=r.choice(nraw, "kind", f"{npath}.kind", NIC_KINDS, "ethernet"),
                    role=r.choice(nraw, "role", f"{npath}.role", NIC_ROLES, "data"),
                )
            )
        free = None
        if raw.get("free_gpus") is not None:
            free = r.integer(raw, "free_gpus", f"{path}.free_gpus", 0, GPUS_PER_NODE_MAX, None)
        p2p = None
        if raw.get("p2p") is not None:
            p2p = r.boolean(raw, "p2p", f"{path}.p2p")
        pool_kind = None
        if raw.get("pool_kind") is not None:
            pool_kind = r.choice(raw, "pool_kind", f"{path}.pool_kind", POOL_KINDS, "dedicated")
        if gpu is None or count is None:
            continue
        nodes.append(
            Node(
                hostname=hostname,
                gpu=gpu,
                gpu_count=count,
                intra_link=link,
                nics=tuple(nics),
                free_gpus=free,
                p2p=p2p,
                address=address,
                pool_kind=pool_kind,
            )
        )
    return tuple(nodes)


def read_hardware(r: Reader, hw: Mapping[str, Any]) -> Hardware:
    """Return the offered nodes and the pool kind; at least one usable GPU is required."""
    pool_kind = r.choice(hw, "pool_kind", "hardware.pool_kind", POOL_KINDS, "dedicated")
    nodes = read_nodes(r, hw) if hw else ()
    if not hw:
        r.errors["hardware"] = "required: {'nodes': [...]} or {'node_count', 'gpus_per_node', ...}"
    elif nodes and sum(n.usable_gpus for n in nodes) == 0:
        r.errors["hardware.nodes"] = "no usable GPU: every node has 0 free GPUs"
    return Hardware(nodes=nodes, pool_kind=pool_kind)


def read_network_overrides(r: Reader, n: Mapping[str, Any]) -> NetworkOverrides:
    """Return the link figures the user measured, replacing the catalog's."""
    return NetworkOverrides(
        cross_node_bandwidth_gbs=r.number(
            n,
            "cross_node_bandwidth_gbs",
            "network.cross_node_bandwidth_gbs",
            gt=0,
            le=10000,
            default=None,
        ),
        intra_node_bandwidth_gbs=r.number(
            n,
            "intra_node_bandwidth_gbs",
            "network.intra_node_bandwidth_gbs",
            gt=0,
            le=100000,
            default=None,
        ),
        per_call_latency_us=r.number(
            n, "per_call_latency_us", "network.per_call_latency_us", gt=0, le=1e6, default=None
        ),
        overlap_factor=r.number(
            n, "overlap_factor", "network.overlap_factor", gt=-1e-9, le=0.95, default=None
        ),
    )
