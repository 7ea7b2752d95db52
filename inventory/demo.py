"""The demo fleet shown by `make run` on a fresh start (idempotent)."""

from typing import Any

from django.db import transaction

from inventory import services
from inventory.models import GpuType, Machine, Pool

DEMO_POOLS: list[dict[str, Any]] = [
    {
        "name": "a800-dedicated",
        "kind": "dedicated",
        "description": "Two 8 × A800 80G NVLink nodes on 25 GbE, reserved for one team's models.",
    },
    {
        "name": "a100-shared",
        "kind": "shared",
        "description": "Two 4 × A100 80G nodes on 25 GbE shared by several models.",
    },
    {"name": "lab", "kind": "dedicated", "description": "A single-card box for experiments."},
]


def _nics(data_gbps: float = 25) -> list[dict[str, Any]]:
    return [
        {"name": "eth1", "speed_gbps": data_gbps, "kind": "ethernet", "role": "data"},
        {"name": "eno1", "speed_gbps": 1, "kind": "ethernet", "role": "management"},
    ]


DEMO_MACHINES: list[dict[str, Any]] = [
    *[
        {
            "hostname": f"a800-node-{i}",
            "management_address": f"10.0.0.{10 + i}",
            "datacenter": "dc1",
            "rack": "r01",
            "pool": "a800-dedicated",
            "gpu_type": "a800-80g-sxm",
            "gpu_count": 8,
            "interconnect": "nvlink",
            "cpu_cores": 128,
            "ram_gib": 1024,
            "owner_team": "llm-platform",
            "tags": "demo,a800",
            "nics": _nics(),
        }
        for i in (1, 2)
    ],
    *[
        {
            "hostname": f"a100-node-{i}",
            "management_address": f"10.0.1.{10 + i}",
            "datacenter": "dc1",
            "rack": "r02",
            "pool": "a100-shared",
            "gpu_type": "a100-80g-sxm",
            "gpu_count": 4,
            "interconnect": "nvlink",
            "cpu_cores": 64,
            "ram_gib": 512,
            "owner_team": "research",
            "tags": "demo,a100",
            "nics": [
                {"name": "ens3", "speed_gbps": 25, "kind": "ethernet", "role": "data"},
                {"name": "eno1", "speed_gbps": 1, "kind": "ethernet", "role": "management"},
            ],
        }
        for i in (1, 2)
    ],
    {
        "hostname": "rtx4090-box",
        "management_address": "10.0.2.10",
        "datacenter": "office",
        "rack": "",
        "pool": "lab",
        "gpu_type": "rtx-4090",
        "gpu_count": 1,
        "interconnect": "pcie",
        "cpu_cores": 16,
        "ram_gib": 64,
        "owner_team": "research",
        "tags": "demo,lab",
        "nics": [{"name": "eth0", "speed_gbps": 10, "kind": "ethernet", "role": "data"}],
    },
]


@transaction.atomic
def load_demo() -> dict[str, int]:
    """Create the demo pools and machines that are missing; existing ones are left alone."""
    created = {"pools": 0, "machines": 0}
    pools = {}
    for spec in DEMO_POOLS:
        pool = Pool.objects.filter(name=spec["name"]).first()
        if pool is None:
            pool = services.pool_create(**spec)
            created["pools"] += 1
        pools[pool.name] = pool
    gpu_types = {g.slug: g for g in GpuType.objects.all()}
    for spec in DEMO_MACHINES:
        if Machine.objects.filter(hostname=spec["hostname"]).exists():
            continue
        fields = dict(spec)
        missing = fields["gpu_type"]
        if missing not in gpu_types:
            raise LookupError(f"GPU type {missing!r} is missing: run manage.py load_catalog first")
        fields["gpu_type"] = gpu_types[fields["gpu_type"]]
        fields["pool"] = pools[fields["pool"]]
        services.machine_create(**fields)
        created["machines"] += 1
    return created


DEMO_TAG = "demo"


def demo_machines() -> Any:
    """Return the demo machines still in the inventory: a demo hostname still tagged demo (a
    team's own machine that reuses a hostname without the tag is never one)."""
    hostnames = [spec["hostname"] for spec in DEMO_MACHINES]
    return Machine.objects.filter(hostname__in=hostnames, tags__icontains=DEMO_TAG)


@transaction.atomic
def demo_remove(*, actor: Any | None = None) -> int:
    """Delete the demo machines, and the demo pools they leave empty; return how many machines
    went. Each deletion goes through the inventory's services (history, audit)."""
    removed = 0
    for machine in demo_machines():
        services.machine_delete(machine=machine, actor=actor)
        removed += 1
    for spec in DEMO_POOLS:
        pool = Pool.objects.filter(name=spec["name"]).first()
        if pool is not None and not pool.machines.exists():
            services.pool_delete(pool=pool, actor=actor)
    return removed
