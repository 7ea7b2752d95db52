"""The monitoring API: targets, alert rules, events, series and the fleet overview."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Exists, OuterRef
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.permissions import AdminOnly
from core.roles import is_admin
from monitoring import selectors, services, stores
from monitoring.api.serializers import (
    AlertEventSerializer,
    AlertRuleSerializer,
    AlertRuleWebhookSecretSerializer,
    AlertRuleWebhookSerializer,
    FleetSeriesQuerySerializer,
    OverviewSerializer,
    PlanComparisonQuerySerializer,
    PlanComparisonSerializer,
    SeriesKeptSerializer,
    SeriesQuerySerializer,
    SeriesResponseSerializer,
    TargetSerializer,
)
from monitoring.api.throttles import SeriesThrottle
from monitoring.error_text import error_class, error_for
from monitoring.filters import AlertEventFilter, AlertRuleFilter, TargetFilter
from monitoring.models import AlertEvent, AlertRule, Target, job_refusal
from monitoring.reality.comparison import PlanUnreadable, plan_comparison
from monitoring.series import Forgotten, StoreUnavailable
from monitoring.shared_cache import shared
from monitoring.targets import kinds
from monitoring.time_marks import time_marks


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "message_dict"):
        return ValidationError(exc.message_dict)
    return ValidationError({"non_field_errors": exc.messages})


def targets_with_token_flag(*, plan_results: bool = False):
    """Targets without their encrypted token, with a `has_token_flag` annotation.

    The list shows the plan's public_id and the decision's number: the plan's result JSON is
    loaded only when asked (`plan_results`, for a comparison).
    """
    plan_json = () if plan_results else ("plan__result", "plan__engine_input", "plan__spec")
    return (
        Target.objects.select_related("plan", "decision")
        .defer("token", *plan_json)
        .annotate(has_token_flag=Exists(Target.objects.filter(pk=OuterRef("pk")).exclude(token="")))
        .prefetch_related("machines")
        .order_by("name")
    )


SERIES_PARAMS = [
    OpenApiParameter(
        "series", str, required=True, description=SeriesQuerySerializer().fields["series"].help_text
    ),
    OpenApiParameter("range", str, enum=list(selectors.RANGES), description="time range"),
    OpenApiParameter("max_points", int, description="points per series (default 1000)"),
]


class TargetViewSet(viewsets.ModelViewSet):
    """vLLM servers and Ray clusters that workers poll. The token is write-only."""

    serializer_class = TargetSerializer
    filterset_class = TargetFilter
    ordering_fields = ["name", "kind", "last_poll_at"]

    def get_queryset(self):
        return targets_with_token_flag(plan_results=self.action == "plan_comparison")

    def perform_create(self, serializer: TargetSerializer) -> None:
        data = dict(serializer.validated_data)
        data.pop("clear_token", None)
        try:
            serializer.instance = services.target_create(**data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None

    def perform_update(self, serializer: TargetSerializer) -> None:
        data = dict(serializer.validated_data)
        token = data.pop("token", None) or None
        clear = data.pop("clear_token", False)
        machines = data.pop("machines", None)
        try:
            serializer.instance = services.target_update(
                target=serializer.instance,
                token=token,
                clear_token=clear,
                machines=machines,
                **data,
            )
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None

    @extend_schema(responses={204: None, 200: SeriesKeptSerializer})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete the target with its samples, rules and events: 204, or 200 naming the series
        a time-series server kept (its admin API refused), for deleting them by hand; 404 when
        another delete took it first."""
        try:
            forgotten = services.target_delete(target=self.get_object())
        except Target.DoesNotExist:  # another delete took it first
            raise NotFound from None
        if forgotten.outcome is not Forgotten.KEPT:
            return Response(status=204)
        return Response(SeriesKeptSerializer(forgotten).data, status=200)

    @extend_schema(parameters=SERIES_PARAMS, responses=SeriesResponseSerializer)
    @action(detail=True, methods=["get"], throttle_classes=[SeriesThrottle])
    def series(self, request: Request, pk: str | None = None) -> Response:
        """Series of this target, raw or rolled up by range, at most ~1,000 points each."""
        target = self.get_object()
        query = SeriesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        refused = target.read_only and job_refusal(target.selector)
        if refused:  # an admin withdrew its job from the selector policy since
            raise PermissionDenied(refused)
        start, end = selectors.resolve_range(query.validated_data["range"])
        with _store_errors():
            data = stores.current().range(
                [stores.ref(target)],
                selectors.parse_series_requests(query.validated_data["series"]),
                start,
                end,
                _max_points(query.validated_data),
            )
        return Response({**data.to_json(), "marks": time_marks(target.pk, start, end)})

    @extend_schema(
        parameters=[PlanComparisonQuerySerializer],
        responses={200: PlanComparisonSerializer, 404: None, 409: None},
    )
    @action(detail=True, methods=["get"], url_path="plan-comparison")
    def plan_comparison(self, request: Request, pk: str | None = None) -> Response:
        """Planned vs observed over a window: scope, warnings, and rows with units and deviations.

        404 when the target is not linked to a plan; 409 when the plan recommends nothing or
        the target is not a vLLM server.
        """
        target = self.get_object()
        query = PlanComparisonQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        start, end = selectors.resolve_range(query.validated_data["window"])
        try:
            comparison = plan_comparison(
                target, start=start, end=end, scope=query.validated_data["scope"]
            )
        except PlanUnreadable as exc:
            return Response({"detail": str(exc)}, status=409)
        if comparison is None:
            return Response({"detail": "This target is not linked to a plan."}, status=404)
        return Response(PlanComparisonSerializer(comparison).data)

    @extend_schema(responses=dict)
    @action(detail=True, methods=["get"])
    def state(self, request: Request, pk: str | None = None) -> Response:
        """The target's status, latest values, server facts and open alert events."""
        target = self.get_object()
        return Response(target_state_payload(target, user=request.user))


def target_state_payload(target: Target, *, user: Any = None) -> dict[str, Any]:
    """Return what the target pages refresh besides their charts (errors as `user` may read)."""
    from django.utils import timezone

    now = timezone.now()
    error_kind, error = error_for(user, target.last_error_kind, target.last_error)
    info = dict(target.info or {})
    if not is_admin(user):
        # No per-exporter diagnostics (addresses, refused or reset) for non-admins.
        info["partial_errors"] = [
            {"kind": error_class(e.get("kind", "")), "where": "", "message": ""}
            for e in info.get("partial_errors", [])
        ]
    payload: dict[str, Any] = {
        "id": target.pk,
        "name": target.name,
        "kind": target.kind,
        "state": selectors.target_state(target, now),
        "last_poll_at": target.last_poll_at,
        "last_success_at": target.last_success_at,
        "last_error": error,
        "last_error_kind": error_kind,
        "last_error_at": target.last_error_at,
        "poll_interval_s": target.poll_interval_s,
        "latest": target.latest,
        "info": info,
        "open_events": AlertEventSerializer(
            AlertEvent.objects.filter(target=target, resolved_at__isnull=True)
            .select_related("rule", "target")
            .defer("target__token"),
            many=True,
        ).data,
    }
    state = kinds.get(target.kind).page_state(target)
    if state is not None:
        payload[target.kind] = state
    return payload


class SeriesStoreUnavailable(APIException):
    status_code = 503
    default_detail = "The time-series server does not answer; try again in a moment."
    default_code = "series_store_unavailable"


@contextmanager
def _store_errors() -> Iterator[None]:
    """A series store that cannot answer is a 503 naming it, never a 500."""
    try:
        yield
    except StoreUnavailable as exc:
        raise SeriesStoreUnavailable(str(exc)) from None


def _max_points(params: dict[str, Any]) -> int:
    return params.get("max_points") or settings.MONITORING_MAX_POINTS_PER_SERIES


class AlertRuleViewSet(viewsets.ModelViewSet):
    """Alert rules: a series, a comparison, a threshold, held for a duration."""

    serializer_class = AlertRuleSerializer
    filterset_class = AlertRuleFilter
    queryset = AlertRule.objects.all().order_by("pk")

    def perform_create(self, serializer: AlertRuleSerializer) -> None:
        try:
            serializer.instance = services.alert_rule_create(**serializer.validated_data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None

    def perform_update(self, serializer: AlertRuleSerializer) -> None:
        data = dict(serializer.validated_data)
        data.pop("target", None)
        try:
            serializer.instance = services.alert_rule_update(rule=serializer.instance, **data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None

    @extend_schema(request=AlertRuleWebhookSerializer, responses=AlertRuleWebhookSecretSerializer)
    @action(detail=True, methods=["post"], permission_classes=[AdminOnly])
    def webhook(self, request: Request, pk: str | None = None) -> Response:
        """Set the rule's webhook URL (admins only) and return its new signing secret, once.

        Every delivery carries `X-ServePlan-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of
        "<t>.<body>" keyed with the secret>`; an empty URL removes the webhook and its secret.
        """
        rule = self.get_object()
        body = AlertRuleWebhookSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            secret = services.alert_rule_webhook_set(
                rule=rule, url=body.validated_data["webhook_url"]
            )
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        response = Response({"webhook_url": rule.webhook_url, "secret": secret})
        response["Cache-Control"] = "no-store"
        return response


class AlertEventViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Alert events, newest first; `open=true` lists those not yet resolved."""

    serializer_class = AlertEventSerializer
    filterset_class = AlertEventFilter
    queryset = AlertEvent.objects.select_related("rule", "target").defer("target__token")


class OverviewView(APIView):
    """The fleet overview: one tile per target (trouble first) and fleet totals."""

    @extend_schema(responses=OverviewSerializer)
    def get(self, request: Request) -> Response:
        # The same for every user: computed once per few seconds for all of them.
        return Response(
            shared("overview", lambda: OverviewSerializer(selectors.fleet_overview()).data)
        )


class FleetSeriesView(APIView):
    """The sum over all targets of unlabelled series (e.g. fleet tokens/s)."""

    throttle_classes = [SeriesThrottle]

    @extend_schema(parameters=SERIES_PARAMS, responses=SeriesResponseSerializer)
    def get(self, request: Request) -> Response:
        query = FleetSeriesQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        # Every open overview asks for it every few seconds: computed once for all of them.
        params = query.validated_data
        return Response(
            shared("fleet-series", lambda: self._compute(params), sorted(params.items()))
        )

    @staticmethod
    def _compute(params: dict[str, Any]) -> dict[str, Any]:
        start, end = selectors.resolve_range(params["range"])
        keys = list(dict.fromkeys(params["series"][:10]))
        targets = stores.refs(Target.objects.all())
        with _store_errors():
            data = stores.current().fleet_sum(targets, keys, start, end, _max_points(params))
        return data.to_json()
