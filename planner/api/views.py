"""The planner API: evaluate a spec, and create/list/retrieve/compare/re-run/export plans."""

import uuid
from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.downloads import attachment
from planner.api.serializers import (
    CompareSerializer,
    PlanCreateSerializer,
    PlanDetailSerializer,
    PlanListSerializer,
    PlanResultSerializer,
    PoolPlanCreateSerializer,
    PoolPlanDetailSerializer,
    PoolPlanListSerializer,
    SpecSerializer,
)
from planner.engine.spec import SpecError
from planner.filters import PlanFilterSet
from planner.models import Plan, PoolPlan
from planner.presentation.api import api_result
from planner.presentation.pool_api import pool_api_result
from planner.services import compare_plans, plan_create, plan_evaluate, plan_rerun
from planner.services.bundles import BundleUnavailable
from planner.services.exports import plan_archive, plan_json, plan_markdown
from planner.services.pools import is_pool_spec, pool_create, pool_evaluate
from planner.throttles import PlanEvaluationThrottle


def _field_errors(exc: SpecError, prefix: str = "") -> ValidationError:
    return ValidationError({f"{prefix}{k}": [v] for k, v in exc.errors.items()})


class EvaluateView(APIView):
    """Run the planner engine on a spec and return its result; nothing is saved.

    Any signed-in user may evaluate (it writes nothing). Bad specs get 400 with one entry per
    field, e.g. `{"pinned_layout.tp": ["must divide the 64 attention heads; allowed: ..."]}`.
    """

    permission_classes = [IsAuthenticated]
    throttle_classes = [PlanEvaluationThrottle]

    @extend_schema(
        request=SpecSerializer,
        responses={200: PlanResultSerializer, 400: OpenApiResponse(description="Field errors")},
        tags=["plans"],
    )
    def post(self, request: Request) -> Response:
        if is_pool_spec(request.data):  # several models: `models: [...]` and one hardware
            try:
                pool = pool_evaluate(spec=request.data)
            except SpecError as exc:
                raise _field_errors(exc) from exc
            return Response(pool_api_result(pool.result))
        serializer = SpecSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            evaluation = plan_evaluate(spec=serializer.validated_data)
        except SpecError as exc:
            raise _field_errors(exc) from exc
        return Response(api_result(evaluation.result))


@extend_schema(tags=["plans"])
class PlanViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Saved plans: immutable snapshots of a spec and the engine's result."""

    lookup_field = "public_id"
    filterset_class = PlanFilterSet

    def get_throttles(self) -> list[Any]:
        # Creating and re-running evaluate the engine; reading plans costs nothing.
        if self.action in ("create", "rerun"):
            return [PlanEvaluationThrottle()]
        return super().get_throttles()

    ordering_fields = ["created_at", "title", "route"]

    def get_queryset(self) -> Any:
        qs = Plan.objects.with_author()
        if self.action == "list":
            qs = qs.defer("spec", "engine_input", "result")
        return qs.select_related("rerun_of")

    def get_serializer_class(self) -> Any:
        if self.action == "list":
            return PlanListSerializer
        if self.action == "create":
            return PlanCreateSerializer
        return PlanDetailSerializer

    @extend_schema(
        request=PlanCreateSerializer,
        responses={201: PlanDetailSerializer, 400: OpenApiResponse(description="Field errors")},
    )
    def create(self, request: Request) -> Response:
        """Evaluate a spec with the current engine and save the plan.

        A spec with `models: [...]` (two or more models, one `hardware`) is a pool plan: it is
        saved as one, and the answer is the pool plan (also at /api/v1/pool-plans/).
        """
        spec = request.data.get("spec") if isinstance(request.data, Mapping) else None
        if is_pool_spec(spec):
            return self._create_pool(request)
        serializer = PlanCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            plan = plan_create(
                spec=serializer.validated_data["spec"],
                actor=request.user,
                title=serializer.validated_data.get("title", ""),
            )
        except SpecError as exc:
            raise _field_errors(exc, "spec.") from exc
        body = PlanDetailSerializer(plan, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    def _create_pool(self, request: Request) -> Response:
        serializer = PoolPlanCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            pool = pool_create(
                spec=serializer.validated_data["spec"],
                actor=request.user,
                title=serializer.validated_data.get("title", ""),
            )
        except SpecError as exc:
            raise _field_errors(exc, "spec.") from exc
        body = PoolPlanDetailSerializer(pool, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={201: PlanDetailSerializer})
    @action(detail=True, methods=["post"])
    def rerun(self, request: Request, public_id: str) -> Response:
        """Re-run a plan's spec with the current engine; the new plan points back at it."""
        plan = self.get_object()
        try:
            new = plan_rerun(plan=plan, actor=request.user)
        except SpecError as exc:
            raise _field_errors(exc, "spec.") from exc
        body = PlanDetailSerializer(new, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("a", OpenApiTypes.UUID, required=True),
            OpenApiParameter("b", OpenApiTypes.UUID, required=True),
        ],
        responses={200: CompareSerializer},
    )
    @action(detail=False, methods=["get"])
    def compare(self, request: Request) -> Response:
        """Compare two plans: recommendation, key figures, spec, signals and pitfalls."""
        ids = {}
        for key in ("a", "b"):
            try:
                ids[key] = uuid.UUID(request.GET.get(key, ""))
            except ValueError:
                raise ValidationError({key: ["required: a plan public_id (UUID)"]}) from None
        left = get_object_or_404(Plan.objects.with_author(), public_id=ids["a"])
        right = get_object_or_404(Plan.objects.with_author(), public_id=ids["b"])
        context = {"request": request}
        return Response(
            {
                "left": PlanListSerializer(left, context=context).data,
                "right": PlanListSerializer(right, context=context).data,
                "differences": compare_plans(left, right).to_dict(),
            }
        )

    @extend_schema(
        responses={
            (200, "text/markdown"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
        },
    )
    @action(detail=True, methods=["get"], url_path=r"export/(?P<fmt>markdown|json)")
    def export(self, request: Request, public_id: str, fmt: str) -> Any:
        """Export a plan as Markdown or JSON (the full snapshot)."""
        plan = self.get_object()
        if fmt == "json":
            return Response(plan_json(plan))
        response = HttpResponse(plan_markdown(plan), content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = attachment(f"plan-{plan.public_id}.md")
        return response

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"], url_path="configs")
    def configs(self, request: Request, public_id: str) -> HttpResponse:
        """Download a deployment bundle: the recommended one, or `?candidate=<id>&variant=<route-
        backend>` for any candidate (allocation table, per-host scripts, Nginx/Serve configs,
        README)."""
        plan = self.get_object()
        candidate = request.query_params.get("candidate", "")
        try:
            archive, name = plan_archive(
                plan,
                candidate,
                request.query_params.get("variant", ""),
                serveplan_url=request.build_absolute_uri("/"),
            )
        except BundleUnavailable as exc:
            return Response({exc.field: [str(exc)]}, status=400)
        response = HttpResponse(archive, content_type="application/zip")
        response["Content-Disposition"] = attachment(name)
        return response


@extend_schema(tags=["plans"])
class PoolPlanViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Saved pool plans (several models on one pool). Create them with POST /api/v1/plans/ and
    a spec holding `models: [...]`."""

    lookup_field = "public_id"
    permission_classes = [IsAuthenticated]

    def get_queryset(self) -> Any:
        qs = PoolPlan.objects.select_related("author")
        if self.action == "list":
            qs = qs.defer("spec", "engine_input", "result")
        return qs

    def get_serializer_class(self) -> Any:
        return PoolPlanListSerializer if self.action == "list" else PoolPlanDetailSerializer
