"""REST API: POST /api/v1/benchmarks/, list, detail, cancel, export."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks import exports, selectors, services
from benchmarks.config import FIELDS
from benchmarks.models import BenchmarkRun
from core.roles import is_planner
from monitoring.models import Target
from planner.models import Plan


class PlannersOnly(BasePermission):
    """Benchmarks load real servers: planners and admins only, for reading too."""

    message = "Benchmarks require the planner or admin role."

    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated and is_planner(request.user))


class RunSerializer(serializers.ModelSerializer[BenchmarkRun]):
    plan = serializers.SlugRelatedField(slug_field="public_id", read_only=True)
    url = serializers.CharField(source="get_absolute_url", read_only=True)

    class Meta:
        model = BenchmarkRun
        fields = (
            "public_id", "url", "target", "target_name", "plan", "status", "cancel_requested",
            "config", "model_name", "prompts_exact", "progress", "results", "comparison", "error",
            "created_at", "started_at", "finished_at",
        )  # fmt: skip
        read_only_fields = fields


class RunCreateSerializer(serializers.Serializer[Any]):
    target = serializers.PrimaryKeyRelatedField(queryset=Target.objects.defer("latest"))
    plan = serializers.SlugRelatedField(
        slug_field="public_id", queryset=Plan.objects.all(), required=False, allow_null=True
    )
    arrival = serializers.CharField(required=False, help_text="closed, poisson or burst")
    requests = serializers.IntegerField(required=False)
    input_tokens = serializers.IntegerField(required=False)
    output_tokens = serializers.IntegerField(required=False)
    input_tokens_sd = serializers.FloatField(required=False)
    output_tokens_sd = serializers.FloatField(required=False)
    shared_prefix_fraction = serializers.FloatField(required=False)
    concurrency = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="levels of a sweep"
    )
    request_rate_rps = serializers.FloatField(required=False, allow_null=True)
    ttft_slo_ms = serializers.FloatField(required=False, allow_null=True)
    tpot_slo_ms = serializers.FloatField(required=False, allow_null=True)
    e2el_slo_ms = serializers.FloatField(required=False, allow_null=True)
    max_duration_s = serializers.IntegerField(required=False)


def _raise_400(exc: DjangoValidationError) -> None:
    raise ValidationError(
        exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
    ) from None


class BenchmarkRunViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[BenchmarkRun]
):
    """Load benchmarks against monitored servers, with the plan's prediction beside them."""

    permission_classes = (PlannersOnly,)
    serializer_class = RunSerializer
    lookup_field = "public_id"

    def get_queryset(self) -> Any:
        return selectors.run_list()

    @extend_schema(request=RunCreateSerializer, responses={201: RunSerializer})
    def create(self, request: Request) -> Response:
        """Queue a run; the plan's workload fills what the body leaves out."""
        given = RunCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        target, plan = data.pop("target"), data.pop("plan", None)
        extra = sorted(set(request.data) - {"target", "plan", *FIELDS})
        if extra:
            raise ValidationError({extra[0]: ["Unknown field."]})
        try:
            run = services.run_create(target=target, plan=plan, data=data, actor=request.user)
        except DjangoValidationError as exc:
            _raise_400(exc)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: RunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, public_id: str | None = None) -> Response:
        """Stop a queued or running benchmark (its partial results are kept)."""
        run = services.run_cancel(run=self.get_object(), actor=request.user)
        return Response(RunSerializer(run).data)

    @extend_schema(responses={(200, "text/csv"): str})
    @action(detail=True, methods=["get"], url_path="export.csv")
    def export_csv(self, request: Request, public_id: str | None = None) -> HttpResponse:
        """Every request's timings, one row each (CSV)."""
        return exports.csv_response(BenchmarkRun.objects.get(pk=self.get_object().pk))

    @extend_schema(responses={(200, "application/json"): dict})
    @action(detail=True, methods=["get"], url_path="export.json")
    def export_json(self, request: Request, public_id: str | None = None) -> HttpResponse:
        """The configuration, summaries, comparison and per-request timings (JSON)."""
        return exports.json_response(BenchmarkRun.objects.get(pk=self.get_object().pk))
