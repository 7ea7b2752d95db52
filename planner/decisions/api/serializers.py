"""API shapes of decision records: one read serializer, small input serializers per action."""

from typing import Any

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api_fields import CompleteRowsMixin
from core.id_lists import SlugListField
from inventory.models import PoolKind
from planner.decisions.guidance import EvidenceKind, ResponsibilityKind
from planner.decisions.models import (
    DecisionRecord,
    DecisionRevision,
    EvidenceItem,
    EvidenceSource,
    ExecutorBackend,
    Responsibility,
)
from planner.decisions.rules import readiness
from planner.models import Plan, PoolPlan, Route

# API field names "responsibility", "measurement" and "origin" (not "kind"/"source"):
# drf-spectacular names enum components after fields, and other apps' enums own those names.


class ResponsibilitySerializer(serializers.ModelSerializer):
    responsibility = serializers.ChoiceField(
        source="kind", choices=ResponsibilityKind.choices, read_only=True
    )
    guidance = serializers.CharField(read_only=True)

    class Meta:
        model = Responsibility
        fields = ["responsibility", "owner", "mechanism", "guidance"]


class EvidenceItemSerializer(serializers.ModelSerializer):
    passed = serializers.BooleanField(read_only=True, allow_null=True)
    comparison = serializers.CharField(read_only=True)
    measured_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    measurement = serializers.ChoiceField(
        source="kind", choices=EvidenceKind.choices, read_only=True
    )
    origin = serializers.ChoiceField(
        source="value_source", choices=EvidenceSource.choices, read_only=True, allow_blank=True
    )

    class Meta:
        model = EvidenceItem
        fields = [
            "measurement",
            "threshold",
            "comparison",
            "measured_value",
            "unit",
            "origin",
            "window_start",
            "window_end",
            "note",
            "measured_at",
            "measured_by",
            "passed",
        ]


class ReadinessSerializer(serializers.Serializer):
    blocking = serializers.ListField(child=serializers.CharField())
    open_evidence = serializers.ListField(child=serializers.CharField())


class DecisionRecordSerializer(serializers.ModelSerializer):
    label = serializers.CharField(read_only=True)
    plan = serializers.SlugRelatedField(slug_field="public_id", read_only=True, allow_null=True)
    pool_plan = serializers.SlugRelatedField(
        slug_field="public_id", read_only=True, allow_null=True
    )
    route = serializers.ChoiceField(choices=Route.choices, read_only=True, allow_blank=True)
    executor_backend = serializers.ChoiceField(
        choices=ExecutorBackend.choices, read_only=True, allow_blank=True
    )
    authors = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    decided_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    superseded_by = serializers.SlugRelatedField(
        slug_field="number", read_only=True, allow_null=True
    )
    supersedes = serializers.SlugRelatedField(slug_field="number", many=True, read_only=True)
    responsibilities = serializers.SerializerMethodField()
    evidence = serializers.SerializerMethodField()
    readiness = serializers.SerializerMethodField()
    url = serializers.HyperlinkedIdentityField(
        view_name="decision-detail", lookup_field="number", read_only=True
    )

    class Meta:
        model = DecisionRecord
        fields = [
            "url",
            "number",
            "label",
            "title",
            "status",
            "plan",
            "pool_plan",
            "pool_kind",
            "model_name",
            "route",
            "executor_backend",
            "layout",
            "context",
            "decision_text",
            "alternatives",
            "consequences",
            "verifiable_sentence",
            "authors",
            "created_by",
            "created_at",
            "updated_at",
            "decided_at",
            "decided_by",
            "accepted_with_open_evidence",
            "superseded_by",
            "supersedes",
            "version",
            "responsibilities",
            "evidence",
            "readiness",
        ]
        read_only_fields = fields

    @extend_schema_field(ResponsibilitySerializer(many=True))
    def get_responsibilities(self, obj: DecisionRecord) -> list[dict[str, Any]]:
        return ResponsibilitySerializer(obj.ordered_responsibilities(), many=True).data

    @extend_schema_field(EvidenceItemSerializer(many=True))
    def get_evidence(self, obj: DecisionRecord) -> list[dict[str, Any]]:
        return EvidenceItemSerializer(obj.ordered_evidence(), many=True).data

    @extend_schema_field(ReadinessSerializer)
    def get_readiness(self, obj: DecisionRecord) -> dict[str, Any]:
        state = readiness(obj)
        return {"blocking": state.blocking, "open_evidence": state.open_evidence}


class ResponsibilityInputSerializer(CompleteRowsMixin, serializers.Serializer):
    responsibility = serializers.ChoiceField(choices=ResponsibilityKind.choices)
    owner = serializers.CharField(max_length=200, allow_blank=True, required=False)
    mechanism = serializers.CharField(allow_blank=True, required=False)


class EvidenceInputSerializer(CompleteRowsMixin, serializers.Serializer):
    measurement = serializers.ChoiceField(choices=EvidenceKind.choices)
    threshold = serializers.FloatField(allow_null=True, required=False, min_value=0)
    measured_value = serializers.FloatField(allow_null=True, required=False, min_value=0)
    note = serializers.CharField(allow_blank=True, required=False)


# People who wrote one record: more than any team, few enough to look up in one query.
MAX_AUTHORS = 50


class DecisionWriteSerializer(serializers.Serializer):
    """Create (POST) or edit (PUT/PATCH, with `version`) a record."""

    title = serializers.CharField(max_length=200)
    pool_kind = serializers.ChoiceField(choices=PoolKind.choices, required=False)
    model_name = serializers.CharField(max_length=200, allow_blank=True, required=False)
    route = serializers.ChoiceField(choices=Route.choices, allow_blank=True, required=False)
    executor_backend = serializers.ChoiceField(
        choices=ExecutorBackend.choices, allow_blank=True, required=False
    )
    layout = serializers.CharField(max_length=60, allow_blank=True, required=False)
    context = serializers.CharField(allow_blank=True, required=False)
    decision_text = serializers.CharField(allow_blank=True, required=False)
    alternatives = serializers.CharField(allow_blank=True, required=False)
    consequences = serializers.CharField(allow_blank=True, required=False)
    verifiable_sentence = serializers.CharField(allow_blank=True, required=False)
    plan = serializers.SlugRelatedField(
        slug_field="public_id",
        queryset=Plan.objects.all(),
        required=False,
        allow_null=True,
        help_text=_("Public id of the saved plan (on create only)."),
    )
    authors = SlugListField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        max_items=lambda: MAX_AUTHORS,
        required=False,
        help_text=_("User names; duplicates count once."),
    )
    # One row per kind: a longer list only repeats kinds (the last row of a kind wins).
    responsibilities = ResponsibilityInputSerializer(
        many=True, required=False, max_length=len(ResponsibilityKind)
    )
    evidence = EvidenceInputSerializer(many=True, required=False, max_length=len(EvidenceKind))
    version = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text=_("The version you read; required on update. A stale version answers 409."),
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None and "version" not in attrs:
            raise serializers.ValidationError(
                {"version": _("Send the version you read, so no one's edit is overwritten.")}
            )
        if self.instance is not None and "plan" in attrs:
            raise serializers.ValidationError(
                {"plan": _("The plan of a record is set when it is created.")}
            )
        return attrs

    def service_kwargs(self) -> dict[str, Any]:
        data = dict(self.validated_data)
        data.pop("version", None)
        if "responsibilities" in data:
            data["responsibilities"] = {
                row.pop("responsibility"): row
                for row in (dict(r) for r in data["responsibilities"])
            }
        if "evidence" in data:
            data["evidence"] = {
                row.pop("measurement"): row for row in (dict(r) for r in data["evidence"])
            }
        return data


class FromPlanSerializer(serializers.Serializer):
    plan = serializers.SlugRelatedField(slug_field="public_id", queryset=Plan.objects.all())
    title = serializers.CharField(max_length=200, required=False)


class FromPoolPlanSerializer(serializers.Serializer):
    pool_plan = serializers.SlugRelatedField(
        slug_field="public_id", queryset=PoolPlan.objects.all()
    )
    title = serializers.CharField(max_length=200, required=False)


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, required=False)


class AcceptSerializer(VersionSerializer):
    with_open_evidence = serializers.BooleanField(default=False)


class SupersedeSerializer(VersionSerializer):
    superseded_by = serializers.SlugRelatedField(
        slug_field="number", queryset=DecisionRecord.objects.all()
    )


class MeasurementSerializer(VersionSerializer):
    measurement = serializers.ChoiceField(choices=EvidenceKind.choices)
    value = serializers.FloatField(min_value=0)
    unit = serializers.ChoiceField(choices=["s", "ms", "%", "ratio"])
    origin = serializers.ChoiceField(choices=EvidenceSource.choices, default="typed")
    window_start = serializers.DateTimeField(required=False, allow_null=True)
    window_end = serializers.DateTimeField(required=False, allow_null=True)
    note = serializers.CharField(allow_blank=True, required=False, default="")


class RevisionSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author_label", read_only=True)

    class Meta:
        model = DecisionRevision
        fields = ["number", "created_at", "author", "action", "changed_fields"]


class RevisionDetailSerializer(RevisionSerializer):
    class Meta(RevisionSerializer.Meta):
        fields = [*RevisionSerializer.Meta.fields, "snapshot"]


class FieldChangeSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)
    lines = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))


class DiffSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    changes = FieldChangeSerializer(many=True)


class ConflictSerializer(serializers.Serializer):
    """409: `detail` always; `current_version` and `changes` when the version was stale."""

    detail = serializers.CharField()
    current_version = serializers.IntegerField(required=False)
    changes = FieldChangeSerializer(many=True, required=False)
