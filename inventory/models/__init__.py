"""Inventory models: the GPU catalog, pools, machines with their NICs, and LLM model specs."""

from inventory.models.hardware import (
    MACHINE_FIELDS,
    FormFactor,
    GpuType,
    Interconnect,
    Machine,
    MachineStatus,
    NetworkInterface,
    NicKind,
    NicRole,
    Pool,
    PoolKind,
    Vendor,
)
from inventory.models.imports import ImportFormat, MachineImportBatch
from inventory.models.modelspec import CheckpointQuantization, Dtype, ModelSpec

__all__ = [
    "MACHINE_FIELDS",
    "CheckpointQuantization",
    "Dtype",
    "FormFactor",
    "GpuType",
    "ImportFormat",
    "Interconnect",
    "Machine",
    "MachineImportBatch",
    "MachineStatus",
    "ModelSpec",
    "NetworkInterface",
    "NicKind",
    "NicRole",
    "Pool",
    "PoolKind",
    "Vendor",
]
