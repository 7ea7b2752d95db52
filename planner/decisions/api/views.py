"""REST API of decision records: /api/v1/decisions/."""

from dataclasses import asdict
from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error

from core.downloads import attachment
from core.parsers import DepthLimitedJSONParser
from planner.decisions import selectors, services
from planner.decisions.api.serializers import (
    AcceptSerializer,
    ConflictSerializer,
    DecisionRecordSerializer,
    DecisionWriteSerializer,
    DiffSerializer,
    EvidenceItemSerializer,
    FromPlanSerializer,
    FromPoolPlanSerializer,
    MeasurementSerializer,
    RevisionDetailSerializer,
    RevisionSerializer,
    SupersedeSerializer,
    VersionSerializer,
)
from planner.decisions.filters import DecisionRecordFilterSet
from planner.decisions.markdown import export_filename, export_markdown
from planner.decisions.models import DecisionRecord, DecisionRevision


class MarkdownRenderer(BaseRenderer):
    media_type = "text/markdown"
    format = "md"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None):
        if isinstance(data, str):
            return data.encode(self.charset)
        # Errors (e.g. 404) still come out readable.
        return str(data.get("detail", data) if isinstance(data, dict) else data).encode()


def _refusal(exc: services.DecisionError) -> Response:
    """Map a service refusal to its HTTP answer."""
    if isinstance(exc, services.DecisionConflict):
        body = {
            "detail": exc.messages[0],
            "current_version": exc.current_version,
            "changes": [asdict(c) for c in exc.changes],
        }
        return Response(body, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, services.AcceptanceRefused):
        return Response(
            {"detail": _("The record cannot be accepted yet."), "missing": exc.messages},
            status=status.HTTP_400_BAD_REQUEST,
        )
    return Response({"detail": " ".join(exc.messages)}, status=status.HTTP_409_CONFLICT)


def _validation(exc: ValidationError) -> Response:
    return Response(as_serializer_error(exc), status=status.HTTP_400_BAD_REQUEST)


REFUSALS = {
    400: OpenApiResponse(
        OpenApiTypes.OBJECT,
        description="Field errors, or {detail, missing} when acceptance is refused.",
    ),
    409: OpenApiResponse(
        ConflictSerializer,
        description="The record changed since `version`, is superseded, or the status change "
        "is not allowed.",
    ),
}


@extend_schema(tags=["decisions"])
class DecisionRecordViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Decision records with the ownership template, evidence and revisions.

    Records are never deleted: reject or supersede them instead.
    """

    serializer_class = DecisionRecordSerializer
    filterset_class = DecisionRecordFilterSet
    # The FilterSet's own `ordering` (an enum shared with the list page) is the only one.
    filter_backends = [DjangoFilterBackend]
    # Nested rows (responsibilities, evidence) only make sense as JSON.
    parser_classes = [DepthLimitedJSONParser]
    lookup_field = "number"
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> Any:
        return selectors.decision_list().select_related("decided_by")

    def _out(self, decision: DecisionRecord, code: int = status.HTTP_200_OK) -> Response:
        fresh = self.get_queryset().get(pk=decision.pk)
        return Response(self.get_serializer(fresh).data, status=code)

    @extend_schema(
        request=DecisionWriteSerializer,
        responses={201: DecisionRecordSerializer, 400: OpenApiResponse(OpenApiTypes.OBJECT)},
    )
    def create(self, request: Request) -> Response:
        """Create a proposed record (all five responsibility rows and six evidence items)."""
        serializer = DecisionWriteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            decision = services.decision_create(actor=request.user, **serializer.service_kwargs())
        except ValidationError as exc:
            return _validation(exc)
        return self._out(decision, status.HTTP_201_CREATED)

    def _update(self, request: Request, partial: bool) -> Response:
        decision = self.get_object()
        serializer = DecisionWriteSerializer(decision, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        try:
            services.decision_update(
                decision=decision,
                actor=request.user,
                expected_version=serializer.validated_data["version"],
                **serializer.service_kwargs(),
            )
        except services.DecisionError as exc:
            return _refusal(exc)
        except ValidationError as exc:
            return _validation(exc)
        return self._out(decision)

    @extend_schema(
        request=DecisionWriteSerializer,
        responses={200: DecisionRecordSerializer, **REFUSALS},
    )
    def update(self, request: Request, number: str) -> Response:
        """Replace the editable fields; `version` must be the version you read."""
        return self._update(request, partial=False)

    @extend_schema(
        request=DecisionWriteSerializer,
        responses={200: DecisionRecordSerializer, **REFUSALS},
    )
    def partial_update(self, request: Request, number: str) -> Response:
        """Change some fields; `version` must be the version you read."""
        return self._update(request, partial=True)

    @extend_schema(request=FromPlanSerializer, responses={201: DecisionRecordSerializer})
    @action(detail=False, methods=["post"], url_path="from-plan")
    def from_plan(self, request: Request) -> Response:
        """Create a proposed record prefilled from a saved plan's snapshot."""
        return self._create_from(
            request, FromPlanSerializer, "plan", services.decision_create_from_plan
        )

    @extend_schema(request=FromPoolPlanSerializer, responses={201: DecisionRecordSerializer})
    @action(detail=False, methods=["post"], url_path="from-pool-plan")
    def from_pool_plan(self, request: Request) -> Response:
        """Create a proposed record prefilled from a saved pool plan (several models)."""
        return self._create_from(
            request, FromPoolPlanSerializer, "pool_plan", services.decision_create_from_pool_plan
        )

    def _create_from(self, request: Request, serializer_class, field: str, service) -> Response:
        """Validate the body, create the record the source `field` proposes, answer 201."""
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        overrides = {}
        if serializer.validated_data.get("title"):
            overrides["title"] = serializer.validated_data["title"]
        try:
            decision = service(
                **{field: serializer.validated_data[field]}, actor=request.user, **overrides
            )
        except ValidationError as exc:
            return _validation(exc)
        return self._out(decision, status.HTTP_201_CREATED)

    def _transition(self, request: Request, serializer_class, service, fields=lambda data: {}):
        """Validate the body, move the record with `service` (at the version the caller read)
        and answer the record, or the refusal naming why."""
        decision = self.get_object()
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            service(
                decision=decision,
                actor=request.user,
                expected_version=data.get("version"),
                **fields(data),
            )
        except services.DecisionError as exc:
            return _refusal(exc)
        return self._out(decision)

    @extend_schema(request=AcceptSerializer, responses={200: DecisionRecordSerializer, **REFUSALS})
    @action(detail=True, methods=["post"])
    def accept(self, request: Request, number: str) -> Response:
        """Accept; refused with the list of what is missing. Open evidence needs the flag."""
        return self._transition(
            request,
            AcceptSerializer,
            services.decision_accept,
            lambda data: {"with_open_evidence": data["with_open_evidence"]},
        )

    @extend_schema(request=VersionSerializer, responses={200: DecisionRecordSerializer, **REFUSALS})
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, number: str) -> Response:
        """Reject a proposed record."""
        return self._transition(request, VersionSerializer, services.decision_reject)

    @extend_schema(
        request=SupersedeSerializer, responses={200: DecisionRecordSerializer, **REFUSALS}
    )
    @action(detail=True, methods=["post"])
    def supersede(self, request: Request, number: str) -> Response:
        """Mark this accepted record superseded by another; it becomes read-only."""
        return self._transition(
            request,
            SupersedeSerializer,
            services.decision_supersede,
            lambda data: {"superseded_by": data["superseded_by"]},
        )

    @extend_schema(
        request=MeasurementSerializer, responses={200: EvidenceItemSerializer, **REFUSALS}
    )
    @action(detail=True, methods=["post"])
    def evidence(self, request: Request, number: str) -> Response:
        """Record one measured value (typed, or from monitoring over a time window)."""
        decision = self.get_object()
        serializer = MeasurementSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            item = services.record_evidence_measurement(
                decision=decision,
                item_kind=data["measurement"],
                value=data["value"],
                unit=data["unit"],
                source=data["origin"],
                window_start=data.get("window_start"),
                window_end=data.get("window_end"),
                note=data.get("note", ""),
                actor=request.user,
                expected_version=data.get("version"),
            )
        except services.DecisionError as exc:
            return _refusal(exc)
        except ValidationError as exc:
            return _validation(exc)
        return Response(EvidenceItemSerializer(item).data)

    @extend_schema(responses=RevisionSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filterset_class=None)
    def revisions(self, request: Request, number: str) -> Response:
        """Every revision of the record, newest first (never deleted)."""
        decision = self.get_object()
        revisions = decision.revisions.order_by("-number")
        return Response(RevisionSerializer(revisions, many=True).data)

    @extend_schema(responses=RevisionDetailSerializer)
    @action(
        detail=True,
        methods=["get"],
        url_path=r"revisions/(?P<revision>\d+)",
        filterset_class=None,
    )
    def revision(self, request: Request, number: str, revision: str) -> Response:
        """One revision with the full snapshot of the record at that point."""
        decision = self.get_object()
        obj = get_object_or_404(DecisionRevision, decision=decision, number=int(revision))
        return Response(RevisionDetailSerializer(obj).data)

    @extend_schema(
        parameters=[
            OpenApiParameter("a", int, required=True, description="From revision"),
            OpenApiParameter("b", int, required=True, description="To revision"),
        ],
        responses=DiffSerializer,
    )
    @action(detail=True, methods=["get"], filterset_class=None)
    def diff(self, request: Request, number: str) -> Response:
        """The changes between any two revisions."""
        decision = self.get_object()
        try:
            a, b = int(request.query_params["a"]), int(request.query_params["b"])
        except (KeyError, ValueError):
            return Response(
                {"detail": _("Give two revision numbers, ?a=1&b=2.")},
                status=status.HTTP_400_BAD_REQUEST,
            )
        _old, _new, changes = selectors.revision_diff(decision, a, b)
        return Response({"a": a, "b": b, "changes": [asdict(c) for c in changes]})

    @extend_schema(responses={(200, "text/markdown"): OpenApiTypes.STR})
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=[MarkdownRenderer],
        filterset_class=None,
    )
    def export(self, request: Request, number: str) -> Response:
        """The record as an ADR Markdown document."""
        decision = self.get_object()
        response = Response(export_markdown(decision), content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = attachment(export_filename(decision))
        return response
