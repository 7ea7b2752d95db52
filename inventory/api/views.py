"""REST API of the inventory (under /api/v1/inventory/). Writes need the planner or admin role."""

from typing import Any

from django.utils.translation import gettext as _
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory import selectors, services
from inventory.api import serializers as s
from inventory.filters import (
    GpuTypeFilterSet,
    MachineFilterSet,
    ModelSpecFilterSet,
    NetworkInterfaceFilterSet,
    PoolFilterSet,
)
from inventory.models import NetworkInterface


class InUse(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "in_use"


def _destroy(delete: Any, obj: Any, request: Request) -> Response:
    try:
        delete(obj, request.user)
    except services.InUseError as exc:
        raise InUse(
            {
                "detail": _("%(object)s is in use and cannot be deleted.") % {"object": obj},
                "used_by": exc.usages,
            }
        ) from exc
    return Response(status=status.HTTP_204_NO_CONTENT)


IN_USE = OpenApiResponse(description="In use: the body lists what uses it (`used_by`).")
DELETED = OpenApiResponse(description="Deleted.")


class InventoryViewSet(viewsets.ModelViewSet):
    """Filtering and sorting come from the same FilterSet as the list pages (`ordering=`)."""

    filter_backends = [DjangoFilterBackend]

    def delete_object(self, obj: Any, actor: Any) -> None:
        """Delete through the model's service (each viewset names its service)."""
        raise TypeError(f"{type(self).__name__} must define delete_object()")

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return _destroy(self.delete_object, self.get_object(), request)


@extend_schema_view(
    list=extend_schema(summary="List GPU types", description="GPU datasheets (catalog rows)."),
    retrieve=extend_schema(summary="Get a GPU type"),
    create=extend_schema(summary="Add a GPU type"),
    update=extend_schema(summary="Replace a GPU type (protects it from load_catalog)"),
    partial_update=extend_schema(summary="Change a GPU type (protects it from load_catalog)"),
    destroy=extend_schema(
        summary="Delete a GPU type no machine uses", responses={204: DELETED, 409: IN_USE}
    ),
)
class GpuTypeViewSet(InventoryViewSet):
    serializer_class = s.GpuTypeSerializer
    filterset_class = GpuTypeFilterSet

    def get_queryset(self) -> Any:
        return selectors.gpu_type_list()

    def delete_object(self, obj: Any, actor: Any) -> None:
        services.gpu_type_delete(gpu_type=obj, actor=actor)


@extend_schema_view(
    list=extend_schema(summary="List pools", description="Pools with machine and GPU counts."),
    retrieve=extend_schema(summary="Get a pool"),
    create=extend_schema(summary="Add a pool"),
    update=extend_schema(summary="Replace a pool"),
    partial_update=extend_schema(summary="Change a pool"),
    destroy=extend_schema(summary="Delete a pool (its machines stay, without a pool)"),
)
class PoolViewSet(InventoryViewSet):
    serializer_class = s.PoolSerializer
    filterset_class = PoolFilterSet

    def get_queryset(self) -> Any:
        return selectors.pool_list()

    def delete_object(self, obj: Any, actor: Any) -> None:
        services.pool_delete(pool=obj, actor=actor)


@extend_schema_view(
    list=extend_schema(
        summary="List machines",
        description="Machines with their GPU type (slug), pool (name), NICs and fastest data NIC.",
    ),
    retrieve=extend_schema(summary="Get a machine"),
    create=extend_schema(summary="Add a machine with its NICs"),
    update=extend_schema(summary="Replace a machine; `nics` replaces all its NICs"),
    partial_update=extend_schema(
        summary="Change a machine; `nics`, when given, replaces all its NICs"
    ),
    destroy=extend_schema(summary="Delete a machine and its NICs"),
)
class MachineViewSet(InventoryViewSet):
    serializer_class = s.MachineSerializer
    filterset_class = MachineFilterSet

    def get_queryset(self) -> Any:
        return selectors.machine_queryset()

    def delete_object(self, obj: Any, actor: Any) -> None:
        services.machine_delete(machine=obj, actor=actor)


@extend_schema_view(
    list=extend_schema(summary="List network interfaces"),
    retrieve=extend_schema(summary="Get a network interface"),
    create=extend_schema(summary="Add a network interface to a machine"),
    update=extend_schema(summary="Replace a network interface"),
    partial_update=extend_schema(summary="Change a network interface"),
    destroy=extend_schema(summary="Remove a network interface"),
)
class NetworkInterfaceViewSet(InventoryViewSet):
    serializer_class = s.NetworkInterfaceSerializer
    filterset_class = NetworkInterfaceFilterSet

    def get_queryset(self) -> Any:
        return NetworkInterface.objects.select_related("machine")

    def delete_object(self, obj: Any, actor: Any) -> None:
        services.nic_delete(nic=obj, actor=actor)


@extend_schema_view(
    list=extend_schema(
        summary="List model specs",
        description="LLM architectures with computed total and active parameter counts.",
    ),
    retrieve=extend_schema(summary="Get a model spec (with its original config.json)"),
    create=extend_schema(summary="Add a model spec by hand (parameters are computed)"),
    update=extend_schema(summary="Replace a model spec (protects it from load_catalog)"),
    partial_update=extend_schema(summary="Change a model spec (protects it from load_catalog)"),
    destroy=extend_schema(
        summary="Delete a model spec nothing uses", responses={204: DELETED, 409: IN_USE}
    ),
)
class ModelSpecViewSet(InventoryViewSet):
    filterset_class = ModelSpecFilterSet

    def get_queryset(self) -> Any:
        if self.action == "list":
            return selectors.model_spec_list()
        return selectors.model_spec_list().defer(None)

    def get_serializer_class(self) -> Any:
        if self.action == "list":
            return s.ModelSpecSerializer
        if self.action == "import_config":
            return s.ModelSpecImportSerializer
        return s.ModelSpecDetailSerializer

    def delete_object(self, obj: Any, actor: Any) -> None:
        services.model_spec_delete(model_spec=obj, actor=actor)

    @extend_schema(
        summary="Import a model from its Hugging Face config.json",
        description=(
            "Send the config.json as a JSON object (`config`) or as text (`config_text`). "
            "Llama, Mistral, Qwen2, Qwen3, Qwen3-MoE, Mixtral and DeepSeek-V2/V3 (MoE, MLA) are "
            "understood; a config missing required keys is refused with the list of them, "
            "text that is not JSON with an error on `config`."
        ),
        request=s.ModelSpecImportSerializer,
        responses={201: s.ModelSpecDetailSerializer, 400: OpenApiResponse(description="Errors")},
    )
    @action(detail=False, methods=["post"], url_path="import-config")
    def import_config(self, request: Request) -> Response:
        serializer = s.ModelSpecImportSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        spec = serializer.save()
        return Response(
            s.ModelSpecDetailSerializer(spec, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


class FleetSummaryView(APIView):
    """GPUs by type, pool and status; total GPU memory; machines without a data NIC."""

    @extend_schema(summary="Fleet summary", responses=s.FleetSummarySerializer)
    def get(self, request: Request) -> Response:
        summary = selectors.fleet_summary()
        return Response(s.FleetSummarySerializer(summary).data)
