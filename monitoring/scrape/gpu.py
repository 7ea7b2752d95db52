"""Extract GPU series from NVIDIA's dcgm-exporter or the nvidia_gpu_exporter (`nvidia_smi_*`).

One payload is one machine. Every GPU (or MIG instance) gets its own series, labelled `gpu`
(the device index) and, on MIG instances, `mig` (GPU_I_ID); per-machine counts (idle, stuck,
throttled) are derived here. Exporter labels that say who uses a GPU (Kubernetes pod, namespace,
container) and what it is (UUID, model, MIG profile) go to `info["gpus"]`, the machine's host
name to `info["hostname"]`.

Real dcgm-exporter output can carry samples whose value is not a number (`ERROR - FAILED TO
CONVERT TO STRING` for array fields) or DCGM's "blank" sentinels (values near 2^31 or 2^63):
such samples are skipped and counted; the rest of the payload is kept.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .errors import ParseError
from .parse import MetricFamily, PromSample, lines_within_limits, parse
from .series import Extracted, RawSnapshot, Sample, make_sample

KIND = "gpu"

MIB = 1024.0 * 1024.0
# Below this utilisation a GPU counts as idle; above this share of memory used while idle, stuck.
IDLE_UTIL_PCT = 5.0
STUCK_MEMORY_PCT = 80.0
# An idle GPU holding at most this share of its memory is free for new work.
FREE_MEMORY_PCT = 10.0
# DCGM marks "no value" with sentinels from 0x7ffffff0 (int32) and 0x7ffffffffffffff0 (int64);
# none of the fields we read can legitimately reach 2^31.
DCGM_BLANK_FROM = float(0x7FFFFFF0)

# NVML clock event (throttle) reason bits, as DCGM_FI_DEV_CLOCK_THROTTLE_REASONS reports them.
POWER_BITS = 0x4 | 0x80  # SW power cap, HW power brake
THERMAL_BITS = 0x20 | 0x40  # SW thermal slowdown, HW thermal slowdown


@dataclass(frozen=True, slots=True)
class Field:
    """One exporter family feeding one per-GPU key: value x scale."""

    family: str
    key: str
    scale: float = 1.0


# First family present wins for a key (dcgm names first, then nvidia-smi names old and new).
FIELDS: tuple[Field, ...] = (
    Field("DCGM_FI_DEV_GPU_UTIL", "gpu.utilization_pct"),
    Field("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpu.utilization_pct", 100.0),
    Field("nvidia_smi_utilization_gpu_ratio", "gpu.utilization_pct", 100.0),
    Field("DCGM_FI_DEV_FB_USED", "gpu.memory_used_mib"),
    Field("nvidia_smi_memory_used_bytes", "gpu.memory_used_mib", 1.0 / MIB),
    Field("DCGM_FI_DEV_FB_TOTAL", "gpu.memory_total_mib"),
    Field("nvidia_smi_memory_total_bytes", "gpu.memory_total_mib", 1.0 / MIB),
    Field("DCGM_FI_DEV_POWER_USAGE", "gpu.power_w"),
    Field("nvidia_smi_power_draw_watts", "gpu.power_w"),
    Field("nvidia_smi_power_draw_instant_watts", "gpu.power_w"),
    Field("DCGM_FI_DEV_POWER_MGMT_LIMIT", "gpu.power_limit_w"),
    Field("nvidia_smi_enforced_power_limit_watts", "gpu.power_limit_w"),
    Field("DCGM_FI_DEV_GPU_TEMP", "gpu.temperature_c"),
    Field("nvidia_smi_temperature_gpu", "gpu.temperature_c"),
    Field("DCGM_FI_DEV_SM_CLOCK", "gpu.sm_clock_mhz"),
    Field("nvidia_smi_clocks_current_sm_clock_hz", "gpu.sm_clock_mhz", 1e-6),
    Field("DCGM_FI_PROF_DRAM_ACTIVE", "gpu.dram_active_pct", 100.0),
    Field("nvidia_smi_utilization_memory_ratio", "gpu.dram_active_pct", 100.0),
    Field("DCGM_FI_DEV_XID_ERRORS", "gpu.xid_last"),
)
FB_PARTS = ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED")
THROTTLE_MASKS = ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
# nvidia-smi reports each reason as its own 0/1 family; older drivers say "throttle".
_SMI_REASONS = ("clocks_event_reasons", "clocks_throttle_reasons")
SMI_THERMAL = tuple(
    f"nvidia_smi_{p}_{r}"
    for p in _SMI_REASONS
    for r in ("sw_thermal_slowdown", "hw_thermal_slowdown")
)
SMI_POWER = tuple(
    f"nvidia_smi_{p}_{r}" for p in _SMI_REASONS for r in ("sw_power_cap", "hw_power_brake_slowdown")
)
SMI_INFO = "nvidia_smi_gpu_info"
SMI_INDEX = "nvidia_smi_index"
WANTED: frozenset[str] = frozenset(
    {
        *(f.family for f in FIELDS),
        *FB_PARTS,
        *THROTTLE_MASKS,
        *SMI_THERMAL,
        *SMI_POWER,
        SMI_INFO,
        SMI_INDEX,
    }
)
PERCENT_KEYS = frozenset({"gpu.utilization_pct", "gpu.dram_active_pct"})
# Facts kept per GPU from exporter labels (ours <- theirs).
IDENTITY_LABELS = {
    "uuid": ("UUID", "uuid"),
    "model": ("modelName", "name"),
    "mig_profile": ("GPU_I_PROFILE",),
    "pod": ("pod",),
    "namespace": ("namespace",),
    "container": ("container",),
}
HOSTNAME_LABELS = ("Hostname", "hostname")
# What the fleet's Machines view shows per GPU, kept in `info["readings"]` beside the facts: the
# view then reads one small document per machine instead of every series' latest value.
READING_KEYS = (
    "gpu.utilization_pct",
    "gpu.memory_used_mib",
    "gpu.memory_total_mib",
    "gpu.memory_used_pct",
    "gpu.temperature_c",
    "gpu.xid_last",
    "gpu.throttle_thermal",
    "gpu.throttle_power",
)

GpuId = tuple[str, str]  # (gpu index, MIG instance id or "")
# A label block: "{" to the first "}" outside a quoted value (a backslash escapes inside quotes).
_LABEL_BLOCK = re.compile(r'\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\}', re.DOTALL)


def _split_sample(line: str) -> tuple[str, str, str] | None:
    """Split a sample line into (name, label block with braces or "", value text).

    None when the labels never close (a quote left open) or no value follows.
    """
    brace = line.find("{")
    space = line.find(" ")
    if brace < 0 or 0 <= space < brace:
        parts = line.split(None, 1)
        rest = parts[1].split() if len(parts) == 2 else []
        return (parts[0], "", rest[0]) if rest else None
    block = _LABEL_BLOCK.match(line, brace)
    if block is None:
        return None
    tail = line[block.end() :].split()
    return (line[:brace], block.group(), tail[0]) if tail else None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Cleaned:
    """A payload ready for the parser: numeric samples only, label blocks by reference."""

    text: str
    dropped: list[str]  # names of the samples whose value is not a number
    blocks: dict[str, str]  # reference -> original label block


_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def numeric_lines(text: str) -> Cleaned:
    """Drop samples whose value is not a number; replace each label block by a reference.

    dcgm-exporter repeats the same long label block (UUID, PCI bus, model, host, driver) on
    every family: the parser reads each distinct block once instead of once per sample.
    """
    kept: list[str] = []
    dropped: list[str] = []
    refs: dict[str, str] = {}
    # The whole page is checked against the poll's limits before any line is split.
    for _number, line in list(lines_within_limits(text)):
        if line[0] == "#":
            kept.append(line)
            continue
        parts = _split_sample(line)
        if parts is None or not _is_number(parts[2]):
            name = line.split("{", 1)[0].split(None, 1)[0]
            # Only a metric name is repeated in a warning: another line may be a file's content.
            dropped.append(name[:100] if _METRIC_NAME.fullmatch(name) else "(not a metric name)")
            continue
        name, block, value = parts
        if block:
            ref = refs.setdefault(block, str(len(refs)))
            kept.append(f'{name}{{{_REF}="{ref}"}} {value}')
        else:
            kept.append(f"{name} {value}")
    blocks = {ref: block for block, ref in refs.items()}
    return Cleaned(text="\n".join(kept) + "\n", dropped=dropped, blocks=blocks)


_REF = "labels_ref"


def _expand(families: dict[str, MetricFamily], blocks: dict[str, str]) -> None:
    """Put each sample's own labels back (each distinct block parsed once, under the limits)."""
    labels: dict[str, dict[str, str]] = {}
    for ref, block in blocks.items():
        parsed = parse(f"x{block} 0\n")
        labels[ref] = dict(parsed["x"].samples[0].labels) if "x" in parsed else {}
    for name, family in list(families.items()):
        samples = tuple(
            PromSample(s.name, labels.get(s.labels.get(_REF, ""), s.labels), s.value)
            for s in family.samples
        )
        families[name] = MetricFamily(family.name, family.type, samples)


def _gpu_id(labels: dict[str, str], index_by_uuid: dict[str, str]) -> GpuId:
    gpu = labels.get("gpu")
    if gpu is None:
        uuid = labels.get("uuid", "")
        gpu = index_by_uuid.get(uuid, uuid)
    return gpu, labels.get("GPU_I_ID", "")


def _samples(family: MetricFamily) -> Iterator[PromSample]:
    return (s for s in family.samples if not s.name.endswith("_created"))


@dataclass(slots=True)
class _Gpu:
    values: dict[str, float]
    facts: dict[str, str]
    thermal: bool = False
    power: bool = False
    throttle_seen: bool = False  # a throttle reason was read (a GPU with nothing else counts)


def extract(text: str, ts: float, *, instance: str = "") -> Extracted:
    """Parse one GPU exporter payload taken at unix time `ts` (`instance` is unused: one host)."""
    cleaned = numeric_lines(text)
    dropped = cleaned.dropped
    families = parse(cleaned.text, WANTED)
    _expand(families, cleaned.blocks)
    warnings: list[str] = []
    skipped = len(dropped)
    if dropped:
        names = ", ".join(sorted(set(dropped))[:5])
        warnings.append(f"{len(dropped)} sample(s) with a non-numeric value skipped ({names})")
    if not families:
        raise ParseError(
            "no GPU series: not a dcgm-exporter or nvidia_gpu_exporter payload"
            + (f" ({len(dropped)} non-numeric sample(s) skipped)" if dropped else "")
        )

    index_by_uuid: dict[str, str] = {}
    for name in (SMI_INFO, SMI_INDEX):
        family = families.get(name)
        for s in _samples(family) if family else ():
            if name == SMI_INFO and "index" in s.labels:
                index_by_uuid[s.labels.get("uuid", "")] = s.labels["index"]
            elif name == SMI_INDEX and math.isfinite(s.value):
                index_by_uuid.setdefault(s.labels.get("uuid", ""), str(int(s.value)))

    gpus: dict[GpuId, _Gpu] = defaultdict(lambda: _Gpu(values={}, facts={}))
    hostnames: set[str] = set()

    for family in families.values():  # identity and host name from every family we read
        for s in _samples(family):
            facts = gpus[_gpu_id(s.labels, index_by_uuid)].facts
            for ours, theirs in IDENTITY_LABELS.items():
                for name in theirs:
                    if s.labels.get(name):
                        facts.setdefault(ours, s.labels[name])
            hostnames.update(s.labels[n] for n in HOSTNAME_LABELS if s.labels.get(n))

    def readable(s: PromSample, family: str) -> bool:
        nonlocal skipped
        blank = family.startswith("DCGM_") and abs(s.value) >= DCGM_BLANK_FROM
        if blank or not math.isfinite(s.value):
            skipped += 1
            warnings.append(f"{family}: blank or non-finite value {s.value:g} skipped")
            return False
        return True

    for spec in FIELDS:
        family = families.get(spec.family)
        if family is None:
            continue
        for s in _samples(family):
            gpu = gpus[_gpu_id(s.labels, index_by_uuid)]
            if spec.key in gpu.values or not readable(s, spec.family):
                continue
            value = s.value * spec.scale
            if spec.key in PERCENT_KEYS and not 0.0 <= value <= 100.0:
                skipped += 1
                warnings.append(f"{spec.family}: {s.value:g} is not a percentage, skipped")
                continue
            gpu.values[spec.key] = value

    # Without FB_TOTAL, the total is used + free (+ reserved, counted by newer exporters).
    fb_parts: dict[GpuId, dict[str, float]] = defaultdict(dict)
    for name in FB_PARTS:
        family = families.get(name)
        for s in _samples(family) if family else ():
            if readable(s, name):
                fb_parts[_gpu_id(s.labels, index_by_uuid)][name] = s.value
    for gid, parts in fb_parts.items():
        if "DCGM_FI_DEV_FB_USED" in parts and "DCGM_FI_DEV_FB_FREE" in parts:
            gpus[gid].values.setdefault("gpu.memory_total_mib", sum(parts.values()))

    for name in THROTTLE_MASKS:
        family = families.get(name)
        for s in _samples(family) if family else ():
            if readable(s, name):
                mask = int(s.value)
                gpu = gpus[_gpu_id(s.labels, index_by_uuid)]
                gpu.throttle_seen = True
                gpu.thermal |= bool(mask & THERMAL_BITS)
                gpu.power |= bool(mask & POWER_BITS)
    for reason_families, attr in ((SMI_THERMAL, "thermal"), (SMI_POWER, "power")):
        for name in reason_families:
            family = families.get(name)
            for s in _samples(family) if family else ():
                if readable(s, name):
                    gpu = gpus[_gpu_id(s.labels, index_by_uuid)]
                    gpu.throttle_seen = True
                    if s.value >= 1:
                        setattr(gpu, attr, True)
    has_throttle = any(n in families for n in (*THROTTLE_MASKS, *SMI_THERMAL, *SMI_POWER))

    samples = _per_gpu_samples(gpus, has_throttle)
    info: dict[str, Any] = {"gpus": _facts(gpus), "readings": readings(samples)}
    samples.extend(_machine_samples(gpus))
    if skipped:
        samples.append(Sample("scrape.samples_skipped", (), float(skipped)))
    if hostnames:
        info["hostname"] = sorted(hostnames)[0]
        if len(hostnames) > 1:
            warnings.append(f"several host names in one payload: {', '.join(sorted(hostnames))}")
    raw = RawSnapshot(kind=KIND, ts=ts)
    return Extracted(gauges=samples, raw=raw, info=info, warnings=warnings, skipped=skipped)


def _labels(gid: GpuId) -> dict[str, str]:
    gpu, mig = gid
    return {"gpu": gpu, "mig": mig} if mig else {"gpu": gpu}


def _order(gid: GpuId) -> tuple[int, str, int, str]:
    gpu, mig = gid
    return (
        int(gpu) if gpu.isdigit() else 1 << 30,
        gpu,
        int(mig) if mig.isdigit() else -1,
        mig,
    )


def _reporting(gpus: dict[GpuId, _Gpu]) -> list[GpuId]:
    """GPU ids with at least one value: a MIG parent seen only through labels is no GPU."""
    return sorted((gid for gid, g in gpus.items() if g.values or g.throttle_seen), key=_order)


def _per_gpu_samples(gpus: dict[GpuId, _Gpu], has_throttle: bool) -> list[Sample]:
    out: list[Sample | None] = []
    for gid in _reporting(gpus):
        gpu = gpus[gid]
        labels = _labels(gid)
        values = dict(gpu.values)
        used_pct = memory_used_pct(values)
        if used_pct is not None:
            values["gpu.memory_used_pct"] = used_pct
        if has_throttle:
            values["gpu.throttle_thermal"] = float(gpu.thermal)
            values["gpu.throttle_power"] = float(gpu.power)
        out.extend(make_sample(key, value, labels) for key, value in sorted(values.items()))
    return [s for s in out if s is not None]


class GpuState(StrEnum):
    """What one GPU (or MIG instance) is doing, from its utilisation and memory."""

    BUSY = "busy"
    IDLE = "idle"  # computes nothing, holds memory
    STUCK = "stuck"  # memory nearly full while it computes nothing: a hung or leaked process
    FREE = "free"  # computes nothing, holds (almost) no memory
    UNKNOWN = "unknown"  # no utilisation reading

    @property
    def idle(self) -> bool:
        """Computes nothing (idle, stuck or free)."""
        return self in (GpuState.IDLE, GpuState.STUCK, GpuState.FREE)


def classify(utilization_pct: float | None, memory_used_pct: float | None) -> GpuState:
    """Classify a GPU by its utilisation and the share of its memory in use (0-100)."""
    if utilization_pct is None:
        return GpuState.UNKNOWN
    if utilization_pct >= IDLE_UTIL_PCT:
        return GpuState.BUSY
    if memory_used_pct is not None and memory_used_pct >= STUCK_MEMORY_PCT:
        return GpuState.STUCK
    if memory_used_pct is None or memory_used_pct <= FREE_MEMORY_PCT:
        return GpuState.FREE
    return GpuState.IDLE


def memory_used_pct(values: dict[str, float]) -> float | None:
    """Memory used as a share of the total, 0-100 (None without both readings)."""
    used, total = values.get("gpu.memory_used_mib"), values.get("gpu.memory_total_mib")
    return None if used is None or not total else min(100.0, 100.0 * used / total)


def _state(values: dict[str, float]) -> GpuState:
    return classify(values.get("gpu.utilization_pct"), memory_used_pct(values))


def _machine_samples(gpus: dict[GpuId, _Gpu]) -> list[Sample]:
    ids = _reporting(gpus)
    if not ids:
        return []
    rows = [gpus[g] for g in ids]
    utils = [g.values["gpu.utilization_pct"] for g in rows if "gpu.utilization_pct" in g.values]
    states = [_state(g.values) for g in rows]

    def total(key: str) -> float | None:
        values = [g.values[key] for g in rows if key in g.values]
        return sum(values) if values else None

    temps = [g.values["gpu.temperature_c"] for g in rows if "gpu.temperature_c" in g.values]
    values: dict[str, float | None] = {
        "gpu.machine.gpus": float(len({gpu for gpu, _mig in ids})),
        "gpu.machine.gpus_idle": float(sum(1 for s in states if s.idle)) if utils else None,
        "gpu.machine.gpus_busy": float(states.count(GpuState.BUSY)) if utils else None,
        "gpu.machine.gpus_stuck": float(states.count(GpuState.STUCK)),
        "gpu.machine.gpus_throttled": float(sum(1 for g in rows if g.thermal or g.power)),
        "gpu.machine.gpus_xid": float(sum(1 for g in rows if g.values.get("gpu.xid_last", 0) > 0)),
        "gpu.machine.utilization_pct": sum(utils) / len(utils) if utils else None,
        "gpu.machine.memory_used_mib": total("gpu.memory_used_mib"),
        "gpu.machine.memory_total_mib": total("gpu.memory_total_mib"),
        "gpu.machine.power_w": total("gpu.power_w"),
        "gpu.machine.temperature_max_c": max(temps) if temps else None,
    }
    out = [make_sample(k, v) for k, v in values.items() if v is not None]
    return [s for s in out if s is not None]


def gpu_id_text(labels: dict[str, str] | tuple[tuple[str, str], ...]) -> str:
    """A GPU's id as the view and the facts name it: "0", or "2/3" for MIG instance 3 of GPU 2."""
    found = dict(labels)
    gpu, mig = found.get("gpu", ""), found.get("mig", "")
    return f"{gpu}/{mig}" if mig else gpu


def readings(samples: list[Sample]) -> dict[str, dict[str, float]]:
    """Return {GPU id: {field: value}} of the READING_KEYS among per-GPU samples.

    Field names drop the "gpu." prefix; values keep two decimals (the view shows at most one).
    """
    wanted = frozenset(READING_KEYS)
    out: dict[str, dict[str, float]] = {}
    for s in samples:
        if s.key in wanted and s.labels:
            gpu = out.setdefault(gpu_id_text(s.labels), {})
            gpu[s.key.removeprefix("gpu.")] = round(s.value, 2)
    return out


def _facts(gpus: dict[GpuId, _Gpu]) -> dict[str, dict[str, str]]:
    """Return identity facts by our series label text: "0", or "2/3" for MIG instance 3 of GPU 2."""
    out = {}
    for gid in _reporting(gpus):
        gpu, mig = gid
        out[f"{gpu}/{mig}" if mig else gpu] = dict(gpus[gid].facts)
    return out


def derive(previous: RawSnapshot | None, current: RawSnapshot) -> list[Sample]:
    """GPU series are gauges: nothing to derive between two polls."""
    return []
