"""One FilterSet per model, shared by the list pages and the API."""

import django_filters as filters
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from inventory.models import (
    FormFactor,
    GpuType,
    Interconnect,
    Machine,
    MachineStatus,
    ModelSpec,
    NetworkInterface,
    NicKind,
    NicRole,
    Pool,
    PoolKind,
    Vendor,
)


def sort_filter(*fields: tuple[str, str, object]) -> filters.OrderingFilter:
    """Return an OrderingFilter of (field, parameter, label) whose every label is translated.

    django-filter formats its "(descending)" labels once, when the FilterSet class is built, so
    they would stay in the language the process started with; lazy labels for both directions
    are rendered in each request's language.
    """
    labels: dict[str, object] = {}
    for field, param, label in fields:
        labels[field] = label
        labels[f"-{param}"] = format_lazy(_("{label} (descending)"), label=label)
    return filters.OrderingFilter(
        fields=tuple((field, param) for field, param, _label in fields),
        field_labels=labels,
        label=_("Sort by"),
    )


class SearchFilterSet(filters.FilterSet):
    """A FilterSet with a free-text `q` over `search_fields`."""

    search_fields: tuple[str, ...] = ()

    q = filters.CharFilter(method="search", label=_("Search"))

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        condition = Q()
        for term in value.split():
            term_q = Q()
            for field in self.search_fields:
                term_q |= Q(**{f"{field}__icontains": term})
            condition &= term_q
        return queryset.filter(condition)


class GpuTypeFilterSet(SearchFilterSet):
    search_fields = ("name", "slug", "vendor", "source")

    vendor = filters.ChoiceFilter(choices=Vendor.choices, label=_("Vendor"))
    form_factor = filters.ChoiceFilter(choices=FormFactor.choices, label=_("Form factor"))
    fp8_support = filters.BooleanFilter(label=_("FP8 support"))
    min_memory_gib = filters.NumberFilter(
        field_name="memory_gib", lookup_expr="gte", label=_("Memory at least (GiB)")
    )
    ordering = sort_filter(
        ("name", "name", _("Name")),
        ("memory_gib", "memory_gib", _("Memory (GiB)")),
        ("hbm_bandwidth_gbs", "hbm_bandwidth_gbs", _("Memory bandwidth (GB/s)")),
        ("bf16_dense_tflops", "bf16_dense_tflops", _("Dense BF16 TFLOPS")),
        ("nvlink_bandwidth_gbs", "nvlink_bandwidth_gbs", _("NVLink (GB/s)")),
    )

    class Meta:
        model = GpuType
        fields = ["q", "vendor", "form_factor", "fp8_support", "min_memory_gib"]


class PoolFilterSet(SearchFilterSet):
    search_fields = ("name", "description")

    kind = filters.ChoiceFilter(choices=PoolKind.choices, label=_("Kind"))
    ordering = sort_filter(("name", "name", _("Name")), ("kind", "kind", _("Kind")))

    class Meta:
        model = Pool
        fields = ["q", "kind"]


class MachineFilterSet(SearchFilterSet):
    search_fields = ("hostname", "management_address", "datacenter", "rack", "owner_team", "tags")

    pool = filters.ModelChoiceFilter(
        queryset=Pool.objects.all(), to_field_name="name", label=_("Pool")
    )
    gpu_type = filters.ModelChoiceFilter(
        queryset=GpuType.objects.all(), to_field_name="slug", label=_("GPU type")
    )
    status = filters.ChoiceFilter(choices=MachineStatus.choices, label=_("Status"))
    interconnect = filters.ChoiceFilter(choices=Interconnect.choices, label=_("Interconnect"))
    datacenter = filters.CharFilter(lookup_expr="iexact", label=_("Datacenter"))
    owner_team = filters.CharFilter(lookup_expr="iexact", label=_("Owner team"))
    tag = filters.CharFilter(method="filter_tag", label=_("Tag"))
    min_gpu_count = filters.NumberFilter(
        field_name="gpu_count", lookup_expr="gte", label=_("GPUs at least")
    )
    has_data_nic = filters.BooleanFilter(method="filter_has_data_nic", label=_("Has a data NIC"))
    ordering = sort_filter(
        ("hostname", "hostname", _("Hostname")),
        ("gpu_count", "gpu_count", _("GPU count")),
        ("gpu_type__name", "gpu_type", _("GPU type")),
        ("pool__name", "pool", _("Pool")),
        ("status", "status", _("Status")),
        ("datacenter", "datacenter", _("Datacenter")),
        ("updated_at", "updated_at", _("Updated")),
    )

    class Meta:
        model = Machine
        fields = [
            "q",
            "pool",
            "gpu_type",
            "status",
            "interconnect",
            "datacenter",
            "owner_team",
            "tag",
            "min_gpu_count",
            "has_data_nic",
        ]

    def filter_tag(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        tag = value.strip()
        # Tags are stored comma-separated without spaces: match whole tags only.
        return queryset.filter(
            Q(tags=tag)
            | Q(tags__startswith=f"{tag},")
            | Q(tags__endswith=f",{tag}")
            | Q(tags__contains=f",{tag},")
        )

    def filter_has_data_nic(self, queryset: QuerySet, name: str, value: bool | None) -> QuerySet:
        if value is None:
            return queryset
        data_nic = NetworkInterface.objects.filter(machine=OuterRef("pk"), role=NicRole.DATA)
        return queryset.filter(Exists(data_nic) if value else ~Exists(data_nic))


class NetworkInterfaceFilterSet(SearchFilterSet):
    search_fields = ("name", "machine__hostname")

    # Bounded to the id column's range: SQLite cannot bind a larger integer (500, not 400).
    machine = filters.NumberFilter(
        field_name="machine_id", min_value=1, max_value=2**63 - 1, label=_("Machine id")
    )
    hostname = filters.CharFilter(field_name="machine__hostname", label=_("Hostname"))
    kind = filters.ChoiceFilter(choices=NicKind.choices, label=_("Kind"))
    role = filters.ChoiceFilter(choices=NicRole.choices, label=_("Role"))
    min_speed_gbps = filters.NumberFilter(
        field_name="speed_gbps", lookup_expr="gte", label=_("Speed at least (Gb/s)")
    )
    ordering = sort_filter(
        ("machine__hostname", "hostname", _("Hostname")),
        ("name", "name", _("Name")),
        ("speed_gbps", "speed_gbps", _("Speed (Gb/s)")),
    )

    class Meta:
        model = NetworkInterface
        fields = ["q", "machine", "hostname", "kind", "role", "min_speed_gbps"]


class ModelSpecFilterSet(SearchFilterSet):
    search_fields = ("name", "slug", "family", "hf_repo", "model_type")

    family = filters.CharFilter(lookup_expr="iexact", label=_("Family"))
    model_type = filters.CharFilter(lookup_expr="iexact", label=_("Model type"))
    is_moe = filters.BooleanFilter(method="filter_is_moe", label=_("Mixture of experts"))
    is_mla = filters.BooleanFilter(method="filter_is_mla", label=_("Multi-head latent attention"))
    user_modified = filters.BooleanFilter(label=_("Edited by a user"))
    ordering = sort_filter(
        ("name", "name", _("Name")),
        ("family", "family", _("Family")),
        ("total_params", "total_params", _("Total parameters (B)")),
        ("active_params", "active_params", _("Active (B)")),
        ("num_layers", "num_layers", _("Layers")),
        ("max_position_embeddings", "max_position_embeddings", _("Max position embeddings")),
    )

    class Meta:
        model = ModelSpec
        fields = ["q", "family", "model_type", "is_moe", "is_mla", "user_modified"]

    def filter_is_moe(self, queryset: QuerySet, name: str, value: bool | None) -> QuerySet:
        if value is None:
            return queryset
        return queryset.filter(num_experts__gt=0) if value else queryset.filter(num_experts=0)

    def filter_is_mla(self, queryset: QuerySet, name: str, value: bool | None) -> QuerySet:
        if value is None:
            return queryset
        return queryset.filter(kv_lora_rank__gt=0) if value else queryset.filter(kv_lora_rank=0)
