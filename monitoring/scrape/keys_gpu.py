"""The keys of GPU exporters (dcgm-exporter, nvidia_gpu_exporter): per GPU or MIG instance, and
per machine."""

from __future__ import annotations

from monitoring.scrape.series_spec import GAUGE, SeriesSpec

GPU_SERIES: tuple[SeriesSpec, ...] = (
    # --- GPUs (dcgm-exporter, nvidia_gpu_exporter), per GPU or MIG instance ---
    SeriesSpec(
        "gpu.utilization_pct",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_GPU_UTIL (MIG: DCGM_FI_PROF_GR_ENGINE_ACTIVE x 100); "
        "nvidia_smi_utilization_gpu_ratio x 100",
        "0-100; `mig` (GPU_I_ID) only on MIG instances",
        latest=True,
    ),
    SeriesSpec(
        "gpu.memory_used_mib",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_FB_USED; nvidia_smi_memory_used_bytes / 2^20",
        "framebuffer memory used",
        latest=True,
    ),
    SeriesSpec(
        "gpu.memory_total_mib",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_FB_TOTAL or FB_USED + FB_FREE + FB_RESERVED; nvidia_smi_memory_total_bytes",
        "framebuffer memory in all",
        latest=True,
    ),
    SeriesSpec(
        "gpu.memory_used_pct",
        GAUGE,
        ("gpu", "mig"),
        "used / total",
        "memory used, 0-100",
        latest=True,
    ),
    SeriesSpec(
        "gpu.power_w",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_POWER_USAGE; nvidia_smi_power_draw_watts",
        "power draw, W",
        latest=True,
    ),
    SeriesSpec(
        "gpu.power_limit_w",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_POWER_MGMT_LIMIT; nvidia_smi_enforced_power_limit_watts",
        "enforced power limit, W",
    ),
    SeriesSpec(
        "gpu.temperature_c",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_GPU_TEMP; nvidia_smi_temperature_gpu",
        "GPU temperature, degrees C",
        latest=True,
    ),
    SeriesSpec(
        "gpu.sm_clock_mhz",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_SM_CLOCK; nvidia_smi_clocks_current_sm_clock_hz / 1e6",
        "SM clock, MHz",
    ),
    SeriesSpec(
        "gpu.dram_active_pct",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_PROF_DRAM_ACTIVE x 100; nvidia_smi_utilization_memory_ratio x 100",
        "memory interface busy, 0-100",
    ),
    SeriesSpec(
        "gpu.xid_last",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_XID_ERRORS",
        "code of the last XID error, 0 = none (dcgm-exporter only)",
        latest=True,
    ),
    SeriesSpec(
        "gpu.throttle_thermal",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS / CLOCKS_EVENT_REASONS bits 0x20|0x40; "
        "nvidia_smi_clocks_*_reasons_{sw,hw}_thermal_slowdown",
        "1 while clocks are cut for temperature",
        latest=True,
    ),
    SeriesSpec(
        "gpu.throttle_power",
        GAUGE,
        ("gpu", "mig"),
        "same bitmask, bits 0x4|0x80; nvidia_smi_clocks_*_reasons_{sw_power_cap,"
        "hw_power_brake_slowdown}",
        "1 while clocks are cut for power",
        latest=True,
    ),
    # --- GPUs, per machine (the target) ---
    SeriesSpec("gpu.machine.gpus", GAUGE, (), "per-GPU series", "physical GPUs seen"),
    SeriesSpec(
        "gpu.machine.gpus_idle",
        GAUGE,
        (),
        "utilization",
        "GPUs or MIG instances below the idle line (5 %)",
    ),
    SeriesSpec("gpu.machine.gpus_busy", GAUGE, (), "utilization", "the others"),
    SeriesSpec(
        "gpu.machine.gpus_stuck",
        GAUGE,
        (),
        "memory + utilization",
        "memory nearly full while utilization is idle (a stuck or hung process)",
    ),
    SeriesSpec(
        "gpu.machine.gpus_throttled", GAUGE, (), "throttle reasons", "thermal or power throttled"
    ),
    SeriesSpec("gpu.machine.gpus_xid", GAUGE, (), "DCGM_FI_DEV_XID_ERRORS", "GPUs with an XID"),
    SeriesSpec(
        "gpu.machine.gpus_idle_planned",
        GAUGE,
        (),
        "plan allocation + utilization (stored by the poller)",
        "idle GPUs the linked plan allocates to a vLLM server or Ray node",
    ),
    SeriesSpec("gpu.machine.utilization_pct", GAUGE, (), "per-GPU series", "mean over GPUs, 0-100"),
    SeriesSpec("gpu.machine.memory_used_mib", GAUGE, (), "per-GPU series", "sum over GPUs"),
    SeriesSpec("gpu.machine.memory_total_mib", GAUGE, (), "per-GPU series", "sum over GPUs"),
    SeriesSpec("gpu.machine.power_w", GAUGE, (), "per-GPU series", "sum over GPUs"),
    SeriesSpec("gpu.machine.temperature_max_c", GAUGE, (), "per-GPU series", "hottest GPU"),
)
