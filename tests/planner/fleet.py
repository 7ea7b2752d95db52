"""The demo fleet of DOMAIN.md's scenarios, built through the inventory's services."""

from inventory.models import GpuType, Machine, Pool
from inventory.services import catalog_load, machine_create, pool_create

A800_HOSTS = ("a800-01", "a800-02")
A100_HOSTS = ("a100-01", "a100-02")
SMALL_HOST = "ws-4090"


def _nics(speed_gbps: float) -> list[dict]:
    return [
        {"name": "eth1", "speed_gbps": speed_gbps, "kind": "ethernet", "role": "data"},
        {"name": "eno1", "speed_gbps": 1, "kind": "ethernet", "role": "management"},
    ]


def build_demo_fleet() -> dict[str, Machine]:
    """Create two 8×A800 and two 4×A100 nodes on 25 GbE and one 24 GB card; return by hostname."""
    if not GpuType.objects.filter(slug="a800-80g-sxm").exists():
        catalog_load()
    gpus = {g.slug: g for g in GpuType.objects.all()}
    a800 = pool_create(name="a800-pool", kind="dedicated")
    a100 = pool_create(name="a100-pool", kind="dedicated")
    machines = {}
    for host in A800_HOSTS:
        machines[host] = machine_create(
            hostname=host,
            gpu_type=gpus["a800-80g-sxm"],
            gpu_count=8,
            interconnect="nvlink",
            pool=a800,
            nics=_nics(25),
        )
    for host in A100_HOSTS:
        machines[host] = machine_create(
            hostname=host,
            gpu_type=gpus["a100-80g-sxm"],
            gpu_count=4,
            interconnect="nvlink",
            pool=a100,
            nics=_nics(25),
        )
    machines[SMALL_HOST] = machine_create(
        hostname=SMALL_HOST,
        gpu_type=gpus["rtx-4090"],
        gpu_count=1,
        interconnect="pcie",
        nics=_nics(10),
    )
    return machines


def pools() -> dict[str, Pool]:
    return {p.name: p for p in Pool.objects.all()}
