"""Django admin for every inventory model; saves and deletes go through the services."""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from simple_history.admin import SimpleHistoryAdmin

from inventory import services
from inventory.models import (
    GpuType,
    Machine,
    MachineImportBatch,
    MachineStatus,
    ModelSpec,
    NetworkInterface,
    Pool,
)
from inventory.selectors import object_usages


class ServiceAdminMixin:
    """Validate with full_clean and record the admin user in the history; refuse in-use deletes."""

    refuse_in_use = True

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        services.object_save(obj=obj, actor=request.user, user_edit=change)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.object_delete(obj=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            services.object_delete(obj=obj, actor=request.user)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        # What uses the object is shown as "protected": the admin then refuses the delete.
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)  # type: ignore[misc]
        if self.refuse_in_use:
            for obj in objs:
                protected.extend(object_usages(obj))
        return deleted, counts, perms_needed, protected


@admin.register(GpuType)
class GpuTypeAdmin(ServiceAdminMixin, SimpleHistoryAdmin):
    list_display = [
        "name",
        "slug",
        "vendor",
        "memory_gib",
        "hbm_bandwidth_gbs",
        "bf16_dense_tflops",
        "nvlink_bandwidth_gbs",
        "form_factor",
        "user_modified",
    ]
    list_filter = ["vendor", "form_factor", "fp8_support", "user_modified"]
    search_fields = ["name", "slug"]


@admin.register(Pool)
class PoolAdmin(ServiceAdminMixin, SimpleHistoryAdmin):
    list_display = ["name", "kind"]
    list_filter = ["kind"]
    search_fields = ["name", "description"]
    refuse_in_use = False  # its machines stay, without a pool


class NetworkInterfaceInline(admin.TabularInline):
    model = NetworkInterface
    extra = 1
    fields = ["name", "speed_gbps", "kind", "role"]


@admin.action(description=_("Set status: active"))
def mark_active(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> None:
    _set_status(modeladmin, request, queryset, MachineStatus.ACTIVE)


@admin.action(description=_("Set status: maintenance"))
def mark_maintenance(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> None:
    _set_status(modeladmin, request, queryset, MachineStatus.MAINTENANCE)


@admin.action(description=_("Set status: retired"))
def mark_retired(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> None:
    _set_status(modeladmin, request, queryset, MachineStatus.RETIRED)


def _set_status(modeladmin: Any, request: HttpRequest, queryset: QuerySet, status: str) -> None:
    changed = services.machines_set_status(machines=queryset, status=status, actor=request.user)
    modeladmin.message_user(
        request,
        ngettext("%(n)d machine changed.", "%(n)d machines changed.", changed) % {"n": changed},
        messages.SUCCESS,
    )


@admin.register(Machine)
class MachineAdmin(ServiceAdminMixin, SimpleHistoryAdmin):
    list_display = ["hostname", "gpu_type", "gpu_count", "interconnect", "pool", "status"]
    list_filter = ["status", "interconnect", "pool", "gpu_type"]
    search_fields = ["hostname", "management_address", "owner_team", "tags"]
    list_select_related = ["gpu_type", "pool"]
    inlines = [NetworkInterfaceInline]
    refuse_in_use = False
    actions = [mark_active, mark_maintenance, mark_retired]

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        instances = formset.save(commit=False)
        for obj in formset.deleted_objects:
            services.nic_delete(nic=obj, actor=request.user)
        for nic in instances:
            services.object_save(obj=nic, actor=request.user)


@admin.register(NetworkInterface)
class NetworkInterfaceAdmin(ServiceAdminMixin, SimpleHistoryAdmin):
    list_display = ["machine", "name", "speed_gbps", "kind", "role"]
    list_filter = ["kind", "role"]
    search_fields = ["name", "machine__hostname"]
    list_select_related = ["machine"]


@admin.register(ModelSpec)
class ModelSpecAdmin(ServiceAdminMixin, SimpleHistoryAdmin):
    list_display = [
        "name",
        "slug",
        "family",
        "model_type",
        "total_params",
        "active_params",
        "user_modified",
    ]
    list_filter = ["family", "model_type", "user_modified", "checkpoint_quantization"]
    search_fields = ["name", "slug", "hf_repo"]
    readonly_fields = ["total_params", "active_params", "config_json"]


@admin.register(MachineImportBatch)
class MachineImportBatchAdmin(admin.ModelAdmin):
    list_display = ["token", "filename", "file_format", "created_by", "created_at", "applied_at"]
    list_filter = ["file_format"]
    readonly_fields = ["token", "created_by", "created_at", "applied_at", "applied_count"]
