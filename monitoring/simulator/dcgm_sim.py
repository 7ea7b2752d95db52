"""A simulated dcgm-exporter (3.x text format) for one machine of the demo fleet.

Each GPU plays a role that stays put, so the Machines view tells a story: most serve a model
(memory pre-allocated by vLLM, utilisation following the day's load), some are free, one holds
its memory while computing nothing (a stuck process), one runs hot and throttles, and one shows
an XID error for two minutes every half "day". The labels and number formats are those of the
real exporter (see tests/monitoring/fixtures/gpu/), and one machine exports a non-numeric value
like a real exporter with custom counters does.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass

from .load import LoadModel

# (family, help, type) in dcgm-exporter's order.
FAMILIES = (
    ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "gauge"),
    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "gauge"),
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "gauge"),
    ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W).", "gauge"),
    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge"),
    ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "gauge"),
    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "gauge"),
    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "gauge"),
    ("DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).", "gauge"),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons.", "gauge"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", "gauge"),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active.", "gauge"),
)
ROLES = ("serving", "free", "stuck", "hot", "xid")
RESERVED_MIB = 512.0
THERMAL_SLOWDOWN = 0x40  # HW thermal slowdown bit of the throttle reasons
IDLE_REASON = 0x1


@dataclass(frozen=True, slots=True)
class GpuMachineProfile:
    """One simulated machine: host name, GPU count and model, memory per GPU, roles."""

    hostname: str
    gpu_count: int
    model: str
    memory_mib: float
    power_limit_w: float
    roles: tuple[str, ...] = ()  # one per GPU; empty: all serving
    custom_counters: bool = False  # adds a field the exporter cannot convert (real quirk)


# The inventory's demo fleet (inventory/demo.py), as a test keeps it.
DEMO_GPU_MACHINES = (
    GpuMachineProfile(
        "a800-node-1", 8, "NVIDIA A800-SXM4-80GB", 81920, 400,
        roles=("serving",) * 6 + ("free", "free"),
    ),
    GpuMachineProfile(
        "a800-node-2", 8, "NVIDIA A800-SXM4-80GB", 81920, 400,
        roles=("serving",) * 4 + ("stuck", "hot", "free", "free"),
    ),
    GpuMachineProfile(
        "a100-node-1", 4, "NVIDIA A100-SXM4-80GB", 81920, 400, roles=("serving",) * 4
    ),
    GpuMachineProfile(
        "a100-node-2", 4, "NVIDIA A100-SXM4-80GB", 81920, 400,
        roles=("serving", "serving", "free", "xid"),
    ),
    GpuMachineProfile(
        "rtx4090-box", 1, "NVIDIA GeForce RTX 4090", 24564, 450, roles=("free",),
        custom_counters=True,
    ),
)  # fmt: skip


def fleet_profile(index: int) -> GpuMachineProfile:
    """A further 8-GPU machine for load tests (`gpu-node-000`...)."""
    roles = ("serving",) * 6 + ("free", "stuck" if index % 10 == 0 else "free")
    return GpuMachineProfile(
        f"gpu-node-{index:03d}", 8, "NVIDIA H100 80GB HBM3", 81559, 700, roles=roles
    )


class SimDcgm:
    """dcgm-exporter's /metrics for one machine, as a function of time."""

    def __init__(self, profile: GpuMachineProfile, *, day_s: float = 1800.0, seed: int = 0):
        self.profile = profile
        self.day_s = day_s
        seed = seed * 7919 + zlib.crc32(profile.hostname.encode())
        self.load = LoadModel(base_rps=1.0, day_s=day_s, seed=seed)
        self._rng = random.Random(seed)
        self._phase = [self._rng.uniform(0, 2 * math.pi) for _ in range(profile.gpu_count)]
        self._uuids = [
            f"GPU-{self._rng.getrandbits(32):08x}-{self._rng.getrandbits(16):04x}-{self._rng.getrandbits(16):04x}-{self._rng.getrandbits(16):04x}-{self._rng.getrandbits(48):012x}"
            for _ in range(profile.gpu_count)
        ]

    def role(self, gpu: int) -> str:
        roles = self.profile.roles
        return roles[gpu] if gpu < len(roles) else "serving"

    def readings(self, gpu: int, now: float) -> dict[str, float]:
        """Return the values of one GPU at `now` (unix seconds)."""
        p = self.profile
        role = self.role(gpu)
        wave = 0.5 + 0.5 * math.sin(2 * math.pi * now / 120.0 + self._phase[gpu])  # ~2 min
        load = self.load.diurnal(now)  # the day's curve, 0.15..1
        jitter = self._rng.uniform(-4.0, 4.0)
        if role in ("serving", "hot", "xid"):
            util = max(3.0, min(100.0, 25.0 + 55.0 * load + 20.0 * wave + jitter))
            used = 0.9 * p.memory_mib  # vLLM's --gpu-memory-utilization 0.9
        elif role == "stuck":
            util, used = 0.0, 0.97 * p.memory_mib
        else:
            util, used = 0.0, 3.0 + self._rng.uniform(0, 2)
        temp = 32.0 + 0.38 * util + self._rng.uniform(-1.0, 1.0)
        reasons = IDLE_REASON if util < 1 else 0
        if role == "hot":
            temp = 78.0 + 11.0 * wave + self._rng.uniform(-0.5, 0.5)
            if temp > 86.0:
                reasons |= THERMAL_SLOWDOWN
        power = 60.0 + (p.power_limit_w - 60.0) * util / 100.0 * 0.9
        xid = 0.0
        if role == "xid" and (now % (self.day_s / 2)) < 120.0:
            xid = 79.0  # "GPU has fallen off the bus"
        sm_clock = 1410.0 if util > 1 else 210.0
        if reasons & THERMAL_SLOWDOWN:
            sm_clock = 1005.0
        return {
            "DCGM_FI_DEV_SM_CLOCK": sm_clock,
            "DCGM_FI_DEV_GPU_TEMP": round(temp),
            "DCGM_FI_DEV_POWER_USAGE": power,
            "DCGM_FI_DEV_POWER_MGMT_LIMIT": p.power_limit_w,
            "DCGM_FI_DEV_GPU_UTIL": round(util),
            "DCGM_FI_DEV_XID_ERRORS": xid,
            "DCGM_FI_DEV_FB_FREE": round(p.memory_mib - RESERVED_MIB - used),
            "DCGM_FI_DEV_FB_USED": round(used),
            "DCGM_FI_DEV_FB_RESERVED": RESERVED_MIB,
            "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": float(reasons),
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": util / 100.0 * 0.97,
            "DCGM_FI_PROF_DRAM_ACTIVE": util / 100.0 * 0.6,
        }

    def _labels(self, gpu: int) -> str:
        p = self.profile
        return (
            f'gpu="{gpu}",UUID="{self._uuids[gpu]}",pci_bus_id="00000000:{0x18 + 0x10 * gpu:02X}:'
            f'00.0",device="nvidia{gpu}",modelName="{p.model}",Hostname="{p.hostname}",'
            f'DCGM_FI_DRIVER_VERSION="535.129.03"'
        )

    def metrics(self, now: float) -> bytes:
        """Return the exporter's text payload at unix time `now`."""
        per_gpu = [self.readings(g, now) for g in range(self.profile.gpu_count)]
        lines: list[str] = []
        for name, doc, kind in FAMILIES:
            lines.append(f"# HELP {name} {doc}")
            lines.append(f"# TYPE {name} {kind}")
            for gpu, values in enumerate(per_gpu):
                value = values[name]
                fractional = name.startswith(("DCGM_FI_PROF", "DCGM_FI_DEV_POWER"))
                text = f"{value:f}" if fractional else f"{value:.0f}"
                lines.append(f"{name}{{{self._labels(gpu)}}} {text}")
        if self.profile.custom_counters:
            lines.append("# HELP DCGM_FI_DEV_COMPUTE_PIDS Compute processes running on the GPU.")
            lines.append("# TYPE DCGM_FI_DEV_COMPUTE_PIDS gauge")
            lines.append(
                f"DCGM_FI_DEV_COMPUTE_PIDS{{{self._labels(0)}}} ERROR - FAILED TO CONVERT TO STRING"
            )
        return ("\n".join(lines) + "\n").encode()
