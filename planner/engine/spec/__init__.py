"""The engine's input: a plan spec with hardware already resolved into plain data.

- `values`: the value types (PlanSpec, Node, Workload, ...) and the choices they accept;
- `parse`: `spec_from_dict`, from the plain dict the API, the CLI and the wizard build;
- `reader`, `hardware`, `model`: the field readers it uses, collecting every error by path.
"""

from planner.engine.spec.parse import spec_from_dict, valid_tp_sizes
from planner.engine.spec.values import (
    ARRIVALS,
    CHECKPOINT_ONLY_DTYPES,
    INTRA_LINKS,
    KV_DTYPES,
    MAX_NODES,
    NIC_KINDS,
    NIC_ROLES,
    POOL_KINDS,
    TRAFFIC_SHAPES,
    WEIGHT_DTYPES,
    GpuSpec,
    Hardware,
    Layout,
    NetworkOverrides,
    Nic,
    Node,
    Operations,
    PlanSpec,
    SpecError,
    Workload,
    catalog_gpu,
)

__all__ = [
    "ARRIVALS",
    "CHECKPOINT_ONLY_DTYPES",
    "INTRA_LINKS",
    "KV_DTYPES",
    "MAX_NODES",
    "NIC_KINDS",
    "NIC_ROLES",
    "POOL_KINDS",
    "TRAFFIC_SHAPES",
    "WEIGHT_DTYPES",
    "GpuSpec",
    "Hardware",
    "Layout",
    "NetworkOverrides",
    "Nic",
    "Node",
    "Operations",
    "PlanSpec",
    "SpecError",
    "Workload",
    "catalog_gpu",
    "spec_from_dict",
    "valid_tp_sizes",
]
