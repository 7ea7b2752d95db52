"""Input and output serializers of the planner API."""

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from planner.engine.pool.result import PoolResult
from planner.engine.spec import KV_DTYPES, TRAFFIC_SHAPES, WEIGHT_DTYPES
from planner.engine.step_backend import STEP_BACKENDS
from planner.models import Plan, PoolPlan
from planner.presentation.api import api_result
from planner.presentation.pool_api import pool_api_result
from planner.selectors import plan_result


class WorkloadSerializer(serializers.Serializer):
    concurrency = serializers.IntegerField(required=False, help_text=_("Concurrent sequences."))
    avg_input_tokens = serializers.IntegerField(required=False)
    avg_output_tokens = serializers.IntegerField(required=False)
    peak_qps = serializers.FloatField(required=False, allow_null=True)
    traffic_shape = serializers.ChoiceField(choices=TRAFFIC_SHAPES, required=False)
    ttft_slo_ms = serializers.FloatField(required=False, allow_null=True)
    itl_slo_ms = serializers.FloatField(required=False, allow_null=True)
    shared_prefixes = serializers.BooleanField(required=False)


class LayoutSerializer(serializers.Serializer):
    tp = serializers.IntegerField()
    pp = serializers.IntegerField(required=False)
    replicas = serializers.IntegerField(required=False)


class SpecSerializer(serializers.Serializer):
    """A plan spec. Documented here; validated by the planner services and the engine.

    Every field error comes back as `{"field.path": ["message with the allowed range"]}`.
    """

    model = serializers.JSONField(
        help_text=_(
            'A catalog or inventory model slug ("qwen2.5-32b"), or '
            '{"hf_config": {...config.json...}, "name": ...}.'
        )
    )
    weight_dtype = serializers.ChoiceField(choices=WEIGHT_DTYPES, required=False)
    pre_quantized = serializers.BooleanField(required=False)
    kv_cache_dtype = serializers.ChoiceField(choices=KV_DTYPES, required=False)
    max_model_len = serializers.IntegerField(required=False)
    gpu_memory_utilization = serializers.FloatField(required=False, help_text="(0, 1]")
    max_num_batched_tokens = serializers.IntegerField(required=False, allow_null=True)
    vllm_version = serializers.CharField(
        required=False,
        help_text=_(
            "The vLLM release to plan for (e.g. 0.19.0): the KV cache is sized by that "
            "version's memory-profiling rules. Default: the version the generated configs target."
        ),
    )
    step_backend = serializers.ChoiceField(
        choices=STEP_BACKENDS,
        required=False,
        help_text=_(
            "What times the serving model's steps: roofline (default) or aiconfigurator "
            "(NVIDIA's measured kernel tables; needs the optional aiconfigurator-core package)."
        ),
    )
    workload = WorkloadSerializer(required=False)
    hardware = serializers.JSONField(
        help_text=_(
            '{"hostnames": [...]}, {"pool": name}, {"fleet": true} (inventory; optional '
            "free_gpus {host: n}, pool_kind, link_override {speed_gbps, kind}), or inline "
            '{"nodes": [...]} / {"node_count", "gpus_per_node", "gpu", '
            '"inter_node_gbps", ...}.'
        )
    )
    operations = serializers.JSONField(required=False)
    pinned_layout = LayoutSerializer(required=False)
    network = serializers.JSONField(required=False)
    calibration = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text=_(
            "A calibration profile's public_id: the engine runs with its measured correction "
            "factors, and the result's `calibration` says which."
        ),
    )

    def to_internal_value(self, data: Any) -> Any:
        # The services and the engine check every field and name it; here only the shape.
        if not isinstance(data, dict):
            raise serializers.ValidationError({"spec": [_("must be a JSON object")]})
        return data


class PlanResultSerializer(serializers.Serializer):
    """The engine's result; every number carries its unit in its name."""

    recommendation = serializers.JSONField(
        help_text=(
            "The chosen layout; `summary` and each of `reasons` is a message: a stable `code`, "
            "its typed `params` (numbers, strings, {term}, nested messages, {codes}) and the "
            "English `text`."
        )
    )
    candidates = serializers.JSONField(
        help_text=(
            "Every layout evaluated; `rejected_reason` is a message (or null). `prediction` is "
            "the one speed shown for a layout (the serving model's p50/p95 with ± bands in "
            "percent; null when it does not fit or was not simulated); the other speed fields "
            "(`output_throughput_tok_s`, `ttft_ms`, `itl_ms`) are the closed-form steady "
            "state the layouts are only ranked on."
        )
    )
    pinned = serializers.JSONField(allow_null=True)
    quantization_options = serializers.JSONField()
    signals = serializers.JSONField(help_text="Signals for and against Ray, each with a message.")
    placement = serializers.JSONField()
    configs = serializers.JSONField()
    pitfalls = serializers.JSONField(
        help_text="Pitfalls, most severe first; each message has an English `action` too."
    )
    assumptions = serializers.JSONField()
    network = serializers.JSONField()
    model = serializers.JSONField()
    node_selection = serializers.JSONField()
    calibration = serializers.JSONField(
        required=False, help_text="The calibration profile the plan was computed with, if any."
    )
    schema_version = serializers.IntegerField(
        help_text="Version of this shape; saved plans of earlier versions are upgraded on read."
    )


class PlanCreateSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, allow_blank=True, max_length=200)
    spec = SpecSerializer()


class PlanListSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)
    url = serializers.SerializerMethodField()
    layout = serializers.CharField(source="layout_label", read_only=True)

    class Meta:
        model = Plan
        fields = [
            "public_id",
            "url",
            "title",
            "author",
            "created_at",
            "engine_version",
            "model_slug",
            "model_name",
            "route",
            "layout",
            "tp",
            "pp",
            "replicas",
            "executor_backend",
            "balancer",
            "pool_kind",
            "hostnames",
        ]
        read_only_fields = fields

    def get_url(self, plan: Plan) -> str:
        request = self.context.get("request")
        url = plan.get_absolute_url()
        return request.build_absolute_uri(url) if request else url


class PlanDetailSerializer(PlanListSerializer):
    rerun_of = serializers.UUIDField(source="rerun_of.public_id", read_only=True, allow_null=True)
    result = serializers.SerializerMethodField()

    class Meta(PlanListSerializer.Meta):
        fields = [*PlanListSerializer.Meta.fields, "rerun_of", "spec", "engine_input", "result"]
        read_only_fields = fields

    @extend_schema_field(PlanResultSerializer)
    def get_result(self, plan: Plan) -> dict[str, Any]:
        return api_result(plan_result(plan))


class CompareSerializer(serializers.Serializer):
    left = PlanListSerializer()
    right = PlanListSerializer()
    differences = serializers.JSONField()


class PoolPlanCreateSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, allow_blank=True, max_length=200)
    spec = serializers.JSONField(
        help_text=_(
            "A pool spec: models: [{model, weight_dtype, max_model_len, workload, priority, "
            "pinned_layout, name}, ...] (2 to 16) and one hardware, operations and network."
        )
    )


class PoolPlanListSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = PoolPlan
        fields = [
            "public_id",
            "url",
            "title",
            "author",
            "created_at",
            "route",
            "model_names",
            "gpus_used",
            "unplaced",
            "hostnames",
            "engine_version",
        ]
        read_only_fields = fields

    def get_url(self, plan: PoolPlan) -> str:
        request = self.context.get("request")
        url = plan.get_absolute_url()
        return request.build_absolute_uri(url) if request else url


class PoolPlanDetailSerializer(PoolPlanListSerializer):
    result = serializers.SerializerMethodField()

    class Meta(PoolPlanListSerializer.Meta):
        fields = [*PoolPlanListSerializer.Meta.fields, "spec", "engine_input", "result"]
        read_only_fields = fields

    @extend_schema_field(serializers.JSONField())
    def get_result(self, plan: PoolPlan) -> dict[str, Any]:
        return pool_api_result(PoolResult.from_dict(plan.result))
