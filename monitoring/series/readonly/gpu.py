"""PromQL of a read-only GPU exporter's series (monitoring.series.readonly): one machine's
dcgm-exporter (`DCGM_FI_*`) or nvidia_gpu_exporter (`nvidia_smi_*`).

Per-GPU series carry our labels `gpu` (the device index) and `mig` (DCGM's GPU_I_ID); the
nvidia-smi families name a GPU by `uuid` only, and their index comes from `nvidia_smi_gpu_info`.
A key's families are tried in monitoring.scrape.gpu.FIELDS' order (`or`: the first family a GPU
has wins), DCGM's blank sentinels are dropped, and the per-machine counts classify GPUs with the
poller's thresholds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from monitoring.scrape import gpu
from monitoring.series.promql import Matcher, vector
from monitoring.series.readonly.builders import Build, Facts, Promql, either, relabel

GPU_LABELS = ("gpu", "mig")
_PER_GPU = " by (gpu, mig) "
_BLANK = f"< {gpu.DCGM_BLANK_FROM:.0f}"


def _family(name: str, sel: Sequence[Matcher]) -> str:
    """One family's values per GPU, under our labels."""
    if name.startswith("DCGM_"):
        return f"max{_PER_GPU}({relabel(f'{vector(name, sel)} {_BLANK}', {'mig': 'GPU_I_ID'})})"
    info = f"max by (uuid, index) ({vector(gpu.SMI_INFO, sel)})"
    joined = f"{vector(name, sel)} * on (uuid) group_left (index) {info}"
    return f"max{_PER_GPU}({relabel(joined, {'gpu': 'index'})})"


def _scaled(name: str, scale: float, sel: Sequence[Matcher]) -> str:
    return _family(name, sel) if scale == 1.0 else f"{scale!r} * {_family(name, sel)}"


FIELDS: dict[str, list[gpu.Field]] = defaultdict(list)
for _field in gpu.FIELDS:
    FIELDS[_field.key].append(_field)


def per_gpu(key: str, sel: Sequence[Matcher]) -> str:
    """A per-GPU key's values: its families in order, the first present per GPU."""
    parts = [_scaled(f.family, f.scale, sel) for f in FIELDS[key]]
    if key == "gpu.memory_total_mib":  # without FB_TOTAL: used + free (+ reserved)
        fb = vector("", [Matcher("__name__", "=~", "|".join(gpu.FB_PARTS)), *sel])
        parts.append(f"sum{_PER_GPU}({relabel(f'{fb} {_BLANK}', {'mig': 'GPU_I_ID'})})")
    return either(parts)


def _memory_used_pct(sel: Sequence[Matcher]) -> str:
    used, total = per_gpu("gpu.memory_used_mib", sel), per_gpu("gpu.memory_total_mib", sel)
    return f"clamp_max(100 * ({used}) / (({total}) > 0), 100)"


def _mask_bits(sel: Sequence[Matcher], bits: int) -> str:
    """1 where the throttle mask has any of `bits` set (PromQL has no bitwise and)."""
    masks = either([_family(n, sel) for n in gpu.THROTTLE_MASKS])
    tests = [f"(floor(({masks}) / {1 << b}) % 2)" for b in range(8) if bits >> b & 1]
    return f"clamp_max({' + '.join(tests)}, 1)"


def _throttle(sel: Sequence[Matcher], bits: int, smi: Sequence[str]) -> str:
    reasons = either([_family(n, sel) for n in smi])
    return either([_mask_bits(sel, bits), f"({reasons}) >= bool 1"])


def _per_gpu_table() -> dict[str, Build]:
    table: dict[str, Build] = {key: _per_gpu_builder(key) for key in FIELDS}
    table["gpu.memory_used_pct"] = lambda sel, w: _memory_used_pct(sel)
    table["gpu.throttle_thermal"] = lambda sel, w: _throttle(sel, gpu.THERMAL_BITS, gpu.SMI_THERMAL)
    table["gpu.throttle_power"] = lambda sel, w: _throttle(sel, gpu.POWER_BITS, gpu.SMI_POWER)
    return table


def _per_gpu_builder(key: str) -> Build:
    return lambda sel, w: per_gpu(key, sel)


PER_GPU: dict[str, Build] = _per_gpu_table()


def _of(key: str, sel: Sequence[Matcher]) -> str:
    return PER_GPU[key](sel, "")


def _count(condition: str, sel: Sequence[Matcher]) -> str:
    """How many GPUs meet `condition`; 0 (not nothing) when the machine reports GPUs."""
    return f"count({condition}) or (0 * {_gpus(sel)})"


def _gpus(sel: Sequence[Matcher]) -> str:
    any_reading = either([_of("gpu.utilization_pct", sel), _of("gpu.memory_used_mib", sel)])
    return f"count(count by (gpu) ({any_reading}))"


def _machine_table() -> dict[str, Build]:
    util, idle = "gpu.utilization_pct", gpu.IDLE_UTIL_PCT

    def stuck(sel: Sequence[Matcher]) -> str:
        full = f"({_of('gpu.memory_used_pct', sel)}) >= {gpu.STUCK_MEMORY_PCT}"
        return f"(({_of(util, sel)}) < {idle}) and ({full})"

    def throttled(sel: Sequence[Matcher]) -> str:
        both = f"({_of('gpu.throttle_thermal', sel)}) + ({_of('gpu.throttle_power', sel)})"
        return f"({both}) > 0"

    return {
        "gpu.machine.gpus": lambda sel, w: _gpus(sel),
        "gpu.machine.gpus_busy": lambda sel, w: (
            f"count(({_of(util, sel)}) >= {idle}) or (0 * count({_of(util, sel)}))"
        ),
        "gpu.machine.gpus_idle": lambda sel, w: (
            f"count(({_of(util, sel)}) < {idle}) or (0 * count({_of(util, sel)}))"
        ),
        "gpu.machine.gpus_stuck": lambda sel, w: _count(stuck(sel), sel),
        "gpu.machine.gpus_throttled": lambda sel, w: _count(throttled(sel), sel),
        "gpu.machine.gpus_xid": lambda sel, w: _count(f"({_of('gpu.xid_last', sel)}) > 0", sel),
        "gpu.machine.utilization_pct": lambda sel, w: f"avg({_of(util, sel)})",
        "gpu.machine.memory_used_mib": lambda sel, w: f"sum({_of('gpu.memory_used_mib', sel)})",
        "gpu.machine.memory_total_mib": lambda sel, w: f"sum({_of('gpu.memory_total_mib', sel)})",
        "gpu.machine.power_w": lambda sel, w: f"sum({_of('gpu.power_w', sel)})",
        "gpu.machine.temperature_max_c": lambda sel, w: f"max({_of('gpu.temperature_c', sel)})",
    }


def facts(label_sets: list[dict[str, str]]) -> dict[str, Any]:
    """Each GPU's facts ("0", or "2/3" for MIG instance 3 of GPU 2: uuid, model, pod, ...) and
    the machine's host name, from the exporter's labels, as a poll keeps them."""
    gpus: dict[str, dict[str, str]] = {}
    hostnames: set[str] = set()
    for labels in label_sets:
        index = labels.get("gpu") or labels.get("index")
        if index is None:
            continue
        mig = labels.get("GPU_I_ID", "")
        fact = gpus.setdefault(f"{index}/{mig}" if mig else index, {})
        for ours, theirs in gpu.IDENTITY_LABELS.items():
            for name in theirs:
                if labels.get(name):
                    fact.setdefault(ours, labels[name])
        hostnames.update(labels[n] for n in gpu.HOSTNAME_LABELS if labels.get(n))
    out: dict[str, Any] = {"gpus": gpus}
    if hostnames:
        out["hostname"] = sorted(hostnames)[0]
    return out


# dcgm-exporter repeats its labels on every family; nvidia-smi's are on its info family.
FACTS = Facts(("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", gpu.SMI_INFO), facts)

PROMQL = Promql(
    {
        "poll.up": lambda sel, w: f"max({vector('up', sel)})",
        "scrape.duration_seconds": lambda sel, w: f"max({vector('scrape_duration_seconds', sel)})",
        **PER_GPU,
        **_machine_table(),
    },
    info=lambda samples: {"readings": gpu.readings(samples)},
    facts=FACTS,
)
