"""Serializers of the inventory API; writes are delegated to inventory.services."""

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api_fields import CompleteRowsMixin
from inventory import selectors, services
from inventory.models import MACHINE_FIELDS, GpuType, Machine, ModelSpec, NetworkInterface, Pool


def as_drf_error(exc: DjangoValidationError) -> serializers.ValidationError:
    """Return a DRF ValidationError with the same field errors (400 with field names)."""
    if hasattr(exc, "error_dict"):
        detail = {
            ("non_field_errors" if k == "__all__" else k): v for k, v in exc.message_dict.items()
        }
        return serializers.ValidationError(detail)
    return serializers.ValidationError({"non_field_errors": exc.messages})


class RangeMessagesMixin:
    """Keep the model's range messages ("GPU count must be between 1 and 64.") in the API."""

    def build_standard_field(self, field_name: str, model_field: Any) -> Any:
        field_class, field_kwargs = super().build_standard_field(field_name, model_field)  # type: ignore[misc]
        messages = {}
        for validator in model_field.validators:
            if isinstance(validator, MaxValueValidator):
                messages["max_value"] = validator.message
            elif isinstance(validator, MinValueValidator):
                messages["min_value"] = validator.message
        if messages:
            field_kwargs.setdefault("error_messages", {}).update(messages)
        return field_class, field_kwargs


class ServiceSerializer(RangeMessagesMixin, serializers.ModelSerializer):
    """A ModelSerializer whose create/update call service functions."""

    def _actor(self) -> Any:
        request = self.context.get("request")
        return getattr(request, "user", None)

    def service_create(self, data: dict[str, Any]) -> Any:
        """Create the object through its service (each subclass names its service)."""
        raise TypeError(f"{type(self).__name__} must define service_create()")

    def service_update(self, instance: Any, data: dict[str, Any]) -> Any:
        """Change the object through its service (each subclass names its service)."""
        raise TypeError(f"{type(self).__name__} must define service_update()")

    def create(self, validated_data: dict[str, Any]) -> Any:
        try:
            return self.service_create(validated_data)
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc

    def update(self, instance: Any, validated_data: dict[str, Any]) -> Any:
        try:
            return self.service_update(instance, validated_data)
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc


class GpuTypeSerializer(ServiceSerializer):
    class Meta:
        model = GpuType
        fields = [
            "id",
            "slug",
            "name",
            "vendor",
            "memory_gib",
            "driver_visible_gib",
            "hbm_bandwidth_gbs",
            "bf16_dense_tflops",
            "fp8_support",
            "nvlink_bandwidth_gbs",
            "form_factor",
            "source",
            "user_modified",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["user_modified", "created_at", "updated_at"]

    def service_create(self, data: dict[str, Any]) -> GpuType:
        return services.gpu_type_create(actor=self._actor(), **data)

    def service_update(self, instance: GpuType, data: dict[str, Any]) -> GpuType:
        return services.gpu_type_update(gpu_type=instance, actor=self._actor(), **data)


class PoolSerializer(ServiceSerializer):
    machine_count = serializers.SerializerMethodField()
    gpu_total = serializers.SerializerMethodField()

    class Meta:
        model = Pool
        fields = [
            "id",
            "name",
            "kind",
            "description",
            "machine_count",
            "gpu_total",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    def get_machine_count(self, pool: Pool) -> int | None:
        return getattr(pool, "machine_count", None)

    def get_gpu_total(self, pool: Pool) -> int | None:
        return getattr(pool, "gpu_total", None)

    def service_create(self, data: dict[str, Any]) -> Pool:
        return services.pool_create(actor=self._actor(), **data)

    def service_update(self, instance: Pool, data: dict[str, Any]) -> Pool:
        return services.pool_update(pool=instance, actor=self._actor(), **data)


class MachineNicSerializer(CompleteRowsMixin, RangeMessagesMixin, serializers.ModelSerializer):
    """A NIC inside a machine (no machine field)."""

    class Meta:
        model = NetworkInterface
        fields = ["id", "name", "speed_gbps", "kind", "role"]
        read_only_fields = ["id"]
        # Uniqueness per machine is checked by the service when the machine is known.
        validators: list[Any] = []


class NetworkInterfaceSerializer(ServiceSerializer):
    hostname = serializers.CharField(source="machine.hostname", read_only=True)

    class Meta:
        model = NetworkInterface
        fields = ["id", "machine", "hostname", "name", "speed_gbps", "kind", "role"]

    def service_create(self, data: dict[str, Any]) -> NetworkInterface:
        return services.nic_create(actor=self._actor(), **data)

    def service_update(self, instance: NetworkInterface, data: dict[str, Any]) -> NetworkInterface:
        return services.nic_update(nic=instance, actor=self._actor(), **data)


class SlugField(serializers.SlugRelatedField):
    """A lookup by slug that refuses NUL: PostgreSQL text cannot hold it (400, not 500)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", ""))
        return super().to_internal_value(data)


class MachineSerializer(ServiceSerializer):
    gpu_type = SlugField(slug_field="slug", queryset=GpuType.objects.all())
    pool = SlugField(
        slug_field="name", queryset=Pool.objects.all(), allow_null=True, required=False
    )
    nics = MachineNicSerializer(many=True, required=False)
    fastest_data_nic = serializers.SerializerMethodField()

    class Meta:
        model = Machine
        fields = [
            "id",
            *MACHINE_FIELDS,
            "nics",
            "fastest_data_nic",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]

    @extend_schema_field(MachineNicSerializer(allow_null=True))
    def get_fastest_data_nic(self, machine: Machine) -> dict[str, Any] | None:
        nic = selectors.fastest_data_nic(machine)
        return MachineNicSerializer(nic).data if nic else None

    def validate_hostname(self, value: str) -> str:
        return value.strip().lower()

    def validate_nics(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = [nic["name"] for nic in value]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise serializers.ValidationError(
                _("Interface names must be unique on a machine; repeated: %(names)s")
                % {"names": ", ".join(duplicates)}
            )
        return value

    def service_create(self, data: dict[str, Any]) -> Machine:
        machine = services.machine_create(actor=self._actor(), **data)
        return selectors.machine_get(machine_id=machine.pk)

    def service_update(self, instance: Machine, data: dict[str, Any]) -> Machine:
        services.machine_update(machine=instance, actor=self._actor(), **data)
        return selectors.machine_get(machine_id=instance.pk)


class ModelSpecSerializer(ServiceSerializer):
    class Meta:
        model = ModelSpec
        exclude = ["config_json"]
        read_only_fields = [
            "total_params",
            "active_params",
            "user_modified",
            "created_at",
            "updated_at",
        ]

    def service_create(self, data: dict[str, Any]) -> ModelSpec:
        return services.model_spec_create(actor=self._actor(), **data)

    def service_update(self, instance: ModelSpec, data: dict[str, Any]) -> ModelSpec:
        return services.model_spec_update(model_spec=instance, actor=self._actor(), **data)


class ModelSpecDetailSerializer(ModelSpecSerializer):
    class Meta:
        model = ModelSpec
        fields = "__all__"
        read_only_fields = [*ModelSpecSerializer.Meta.read_only_fields, "config_json"]


class ModelSpecImportSerializer(serializers.Serializer):
    """A Hugging Face config.json, as a JSON object (`config`) or as text (`config_text`)."""

    name = serializers.CharField(max_length=150)
    slug = serializers.CharField(max_length=100, required=False, allow_blank=True)
    family = serializers.CharField(max_length=60, required=False, allow_blank=True)
    hf_repo = serializers.CharField(max_length=200, required=False, allow_blank=True)
    config = serializers.JSONField(
        required=False, help_text="The config.json object, as a JSON object."
    )
    config_text = serializers.CharField(
        required=False, help_text="The config.json file content, as text."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "config" not in attrs and "config_text" not in attrs:
            raise serializers.ValidationError(
                {"config": _("Give the config.json as `config` (object) or `config_text` (text).")}
            )
        try:
            if "config" in attrs:
                config = attrs["config"]
                if not isinstance(config, dict):
                    raise DjangoValidationError(
                        {"config": _("config.json must be a JSON object ({...}).")}
                    )
            else:
                config = services.parse_config_json(attrs["config_text"])
            services.architecture_from_config(config)
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc
        attrs["config"] = config
        return attrs

    def create(self, validated_data: dict[str, Any]) -> ModelSpec:
        request = self.context.get("request")
        try:
            return services.model_spec_import_config(
                config=validated_data["config"],
                name=validated_data["name"],
                slug=validated_data.get("slug") or "",
                family=validated_data.get("family") or "",
                hf_repo=validated_data.get("hf_repo") or "",
                actor=getattr(request, "user", None),
            )
        except DjangoValidationError as exc:
            raise as_drf_error(exc) from exc


class SummaryRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    machines = serializers.IntegerField()
    gpus = serializers.IntegerField()
    gpu_memory_gib = serializers.FloatField()


class HostnameSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    hostname = serializers.CharField()


class FleetSummarySerializer(serializers.Serializer):
    machines = serializers.IntegerField(help_text="Machines in service (not retired).")
    gpus = serializers.IntegerField(help_text="GPUs in machines in service.")
    gpu_memory_gib = serializers.FloatField(help_text="Total GPU memory in service, GiB.")
    retired_machines = serializers.IntegerField()
    by_gpu_type = SummaryRowSerializer(many=True)
    by_pool = SummaryRowSerializer(many=True)
    by_status = SummaryRowSerializer(many=True)
    machines_without_data_nic = HostnameSerializer(
        many=True, help_text="Planning hazard: the planner cannot price their links."
    )
