"""Reads of the inventory for pages, the API and other apps (the planner calls these)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import models
from django.db.models import Count, Exists, F, FloatField, OuterRef, Prefetch, QuerySet, Sum
from django.db.models.functions import Coalesce, Least

from catalog import Architecture
from catalog.bounds import GPU_MEMORY_GIB_MAX
from inventory.architecture import spec_to_architecture
from inventory.models import (
    GpuType,
    Machine,
    MachineStatus,
    ModelSpec,
    NetworkInterface,
    NicRole,
    Pool,
)


def machine_queryset() -> QuerySet[Machine]:
    """Return machines with their GPU type, pool and NICs (two queries however many rows)."""
    return Machine.objects.select_related("gpu_type", "pool").prefetch_related(
        Prefetch("nics", queryset=NetworkInterface.objects.order_by("name"))
    )


def machine_list(
    *,
    ids: Iterable[int] | None = None,
    hostnames: Iterable[str] | None = None,
    pool_id: int | None = None,
    status: str | None = None,
) -> QuerySet[Machine]:
    """Return machines (GPU type, pool and NICs prefetched), optionally narrowed."""
    qs = machine_queryset()
    if ids is not None:
        qs = qs.filter(pk__in=list(ids))
    if hostnames is not None:
        qs = qs.filter(hostname__in=list(hostnames))
    if pool_id is not None:
        qs = qs.filter(pool_id=pool_id)
    if status is not None:
        qs = qs.filter(status=status)
    return qs


def machine_get(*, machine_id: int) -> Machine:
    """Return one machine with GPU type, pool and NICs loaded (Machine.DoesNotExist if absent)."""
    return machine_queryset().get(pk=machine_id)


def data_nics(machine: Machine) -> list[NetworkInterface]:
    """Return the machine's data NICs, fastest first (uses prefetched NICs when present)."""
    nics = [nic for nic in machine.nics.all() if nic.role == NicRole.DATA]
    return sorted(nics, key=lambda nic: (-nic.speed_gbps, nic.name))


def fastest_data_nic(machine: Machine) -> NetworkInterface | None:
    """Return the machine's fastest data NIC, or None when none is recorded."""
    nics = data_nics(machine)
    return nics[0] if nics else None


def link_speed_gbps(a: Machine, b: Machine) -> float | None:
    """Return the speed of the link between two machines: the slower of their fastest data NICs."""
    nic_a, nic_b = fastest_data_nic(a), fastest_data_nic(b)
    if nic_a is None or nic_b is None:
        return None
    return min(nic_a.speed_gbps, nic_b.speed_gbps)


def gpu_type_list() -> QuerySet[GpuType]:
    """Return GPU types with the number of machines and GPUs of each."""
    return GpuType.objects.annotate(
        machine_count=Count("machines", distinct=True),
        gpu_total=Coalesce(Sum("machines__gpu_count"), 0),
    ).order_by("name")


def gpu_type_get(*, slug: str) -> GpuType:
    """Return the GPU type with this slug."""
    return GpuType.objects.get(slug=slug)


def pool_list() -> QuerySet[Pool]:
    """Return pools with the number of machines and GPUs in each."""
    return Pool.objects.annotate(
        machine_count=Count("machines", distinct=True),
        gpu_total=Coalesce(Sum("machines__gpu_count"), 0),
    ).order_by("name")


def model_spec_list() -> QuerySet[ModelSpec]:
    """Return model specs (the large config_json is deferred)."""
    return ModelSpec.objects.defer("config_json")


def model_spec_get(*, slug: str | None = None, pk: int | None = None) -> ModelSpec:
    """Return one model spec by slug or id."""
    if slug is not None:
        return ModelSpec.objects.get(slug=slug)
    return ModelSpec.objects.get(pk=pk)


def model_spec_architecture(spec: ModelSpec) -> Architecture:
    """Return the spec as the catalog's Architecture, the planner engine's model input."""
    return spec_to_architecture(spec)


UsageFinder = Callable[[models.Model], list[str]]
_usage_finders: list[UsageFinder] = []


def register_usage_finder(finder: UsageFinder) -> UsageFinder:
    """Add a function naming what uses an inventory row without a foreign key to it.

    Apps that refer to inventory rows by value (a saved plan keeps its model's slug) register
    one in their AppConfig.ready(), so inventory never imports them. A finder returns labels
    such as "plan: Llama 70B on A800" for the object, or [] when it does not use it.
    """
    if finder not in _usage_finders:
        _usage_finders.append(finder)
    return finder


def unregister_usage_finder(finder: UsageFinder) -> None:
    """Remove a finder added by register_usage_finder (tests)."""
    if finder in _usage_finders:
        _usage_finders.remove(finder)


def object_usages(obj: models.Model, *, limit: int = 50) -> list[str]:
    """Return what still refers to `obj` ("machine: gpu-01"), at most `limit` entries per kind.

    Every reverse foreign key counts whatever its on_delete, so deleting a GPU type or a model
    spec that something uses is refused instead of cascading or nulling; so does whatever a
    registered usage finder reports. History rows are not usages.
    """
    usages: list[str] = []
    for relation in obj._meta.related_objects:
        related = relation.related_model
        if getattr(related, "instance_type", None) is not None:  # simple_history table
            continue
        if relation.many_to_many or related is NetworkInterface:
            continue  # a machine's own interfaces go with it
        accessor = relation.get_accessor_name()
        if accessor is None:
            continue
        if relation.one_to_one:
            target = getattr(obj, accessor, None)
            rows = [target] if target is not None else []
        else:
            rows = list(getattr(obj, accessor).all()[: limit + 1])
        label = related._meta.verbose_name
        usages.extend(f"{label}: {row}" for row in rows[:limit])
        if len(rows) > limit:
            usages.append(f"{label}: …")
    for finder in _usage_finders:
        usages.extend(finder(obj))
    return usages


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRow:
    key: str
    label: str
    machines: int
    gpus: int
    gpu_memory_gib: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSummary:
    """Figures of the whole fleet. Totals count machines in service (not retired)."""

    machines: int
    gpus: int
    gpu_memory_gib: float
    retired_machines: int
    by_gpu_type: list[SummaryRow] = field(default_factory=list)
    by_pool: list[SummaryRow] = field(default_factory=list)
    by_status: list[SummaryRow] = field(default_factory=list)
    machines_without_data_nic: list[Machine] = field(default_factory=list)


def _memory_gib() -> Coalesce:
    """Return the summed GPU memory of the machines, each GPU's figure within the planner's bound.

    Stored figures are validated against the bound; a row written before that was could still
    hold 1e308, and its sum would overflow (infinite JSON on SQLite, an error on PostgreSQL).
    """
    per_gpu = Least(F("gpu_type__memory_gib"), models.Value(GPU_MEMORY_GIB_MAX))
    return Coalesce(Sum(F("gpu_count") * per_gpu, output_field=FloatField()), 0.0)


def _rows(qs: QuerySet[Machine], key: str, label: str) -> list[SummaryRow]:
    grouped = (
        qs.values(key, label)
        .annotate(
            n_machines=Count("id"), n_gpus=Coalesce(Sum("gpu_count"), 0), memory=_memory_gib()
        )
        .order_by(label)
    )
    return [
        SummaryRow(
            key=str(row[key] if row[key] is not None else ""),
            label=str(row[label] if row[label] is not None else ""),
            machines=row["n_machines"],
            gpus=row["n_gpus"],
            gpu_memory_gib=float(row["memory"]),
        )
        for row in grouped
    ]


def fleet_summary() -> FleetSummary:
    """Return GPUs by type, pool and status, total GPU memory, and machines lacking a data NIC."""
    all_machines = Machine.objects.all()
    in_service = all_machines.exclude(status=MachineStatus.RETIRED)
    totals = in_service.aggregate(
        machines=Count("id"), gpus=Coalesce(Sum("gpu_count"), 0), memory=_memory_gib()
    )
    status_labels = dict(MachineStatus.choices)
    by_status = [
        SummaryRow(
            key=row.key,
            label=str(status_labels.get(row.key, row.key)),
            machines=row.machines,
            gpus=row.gpus,
            gpu_memory_gib=row.gpu_memory_gib,
        )
        for row in _rows(all_machines, "status", "status")
    ]
    has_data_nic = NetworkInterface.objects.filter(machine=OuterRef("pk"), role=NicRole.DATA)
    lacking = list(
        in_service.filter(~Exists(has_data_nic))
        .select_related("pool", "gpu_type")
        .order_by("hostname")
    )
    return FleetSummary(
        machines=totals["machines"],
        gpus=totals["gpus"],
        gpu_memory_gib=float(totals["memory"]),
        retired_machines=all_machines.filter(status=MachineStatus.RETIRED).count(),
        by_gpu_type=_rows(in_service, "gpu_type__slug", "gpu_type__name"),
        by_pool=_rows(in_service, "pool__name", "pool__name"),
        by_status=by_status,
        machines_without_data_nic=lacking,
    )


__all__ = [
    "FleetSummary",
    "SummaryRow",
    "data_nics",
    "fastest_data_nic",
    "fleet_summary",
    "gpu_type_get",
    "gpu_type_list",
    "link_speed_gbps",
    "machine_get",
    "machine_list",
    "machine_queryset",
    "model_spec_architecture",
    "model_spec_get",
    "model_spec_list",
    "object_usages",
    "pool_list",
    "register_usage_finder",
    "unregister_usage_finder",
]
