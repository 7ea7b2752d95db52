"""Calibration profiles over the API: read them, or fit and save a new version from targets."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.id_lists import IdListField
from monitoring import selectors
from monitoring.models import Target
from monitoring.reality.calibration import calibration_create
from planner.models import CalibrationProfile
from planner.throttles import PlanEvaluationThrottle


class CalibrationProfileSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

    class Meta:
        model = CalibrationProfile
        fields = [
            "public_id",
            "key",
            "gpu",
            "model_family",
            "weight_dtype",
            "version",
            "created_at",
            "created_by",
            "factors",
            "window_start",
            "window_end",
            "sources",
            "residuals",
            "observations",
            "rms_error_before_pct",
            "rms_error_after_pct",
        ]
        read_only_fields = fields


class CalibrationFitSerializer(serializers.Serializer):
    targets = IdListField(
        queryset=Target.objects.defer("token").select_related("plan"),
        max_ids=lambda: settings.MONITORING_CALIBRATION_MAX_TARGETS,
        help_text=(
            "Ids of vLLM targets linked to plans of one GPU type × model family × dtype "
            "(each once; at most MONITORING_CALIBRATION_MAX_TARGETS, 100 by default)."
        ),
    )
    window = serializers.ChoiceField(
        choices=list(selectors.RANGES), default="1h", help_text="The window to fit, up to now."
    )


class CalibrationProfileViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Versioned calibration profiles: factors with standard errors, targets, window, residuals.

    POST fits the chosen targets over the window and saves the next version of its key
    (planner role). A plan uses a profile when its spec names the profile's public_id
    (`"calibration": "<public_id>"`).
    """

    serializer_class = CalibrationProfileSerializer
    lookup_field = "public_id"

    def get_throttles(self) -> list[Any]:
        # A fit reads every target's window and solves a least-squares problem: it costs CPU
        # like a plan evaluation, and shares that per-user limit.
        if self.action == "create":
            return [PlanEvaluationThrottle()]
        return super().get_throttles()

    queryset = CalibrationProfile.objects.select_related("created_by").order_by("key", "-version")
    filterset_fields = ["key", "gpu", "model_family", "weight_dtype"]

    @extend_schema(request=CalibrationFitSerializer, responses={201: CalibrationProfileSerializer})
    def create(self, request: Request) -> Response:
        query = CalibrationFitSerializer(data=request.data)
        query.is_valid(raise_exception=True)
        start, end = selectors.resolve_range(query.validated_data["window"])
        try:
            profile = calibration_create(
                targets=query.validated_data["targets"], start=start, end=end, actor=request.user
            )
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict) from None
        return Response(CalibrationProfileSerializer(profile).data, status=status.HTTP_201_CREATED)
