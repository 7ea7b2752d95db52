"""Serializers of the monitoring API. Writes go through monitoring.services."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.id_lists import IdListField
from core.roles import is_admin
from inventory.models import Machine
from monitoring.error_text import error_for
from monitoring.models import (
    MAX_POLL_INTERVAL_S,
    MIN_POLL_INTERVAL_S,
    TARGET_POLL_STATE_FIELDS,
    AlertEvent,
    AlertRule,
    Target,
)
from monitoring.reality.comparison import Quantity, Scope
from monitoring.reality.server_checks import WarningCode
from monitoring.scrape.keys import BY_KEY
from monitoring.scrape.series import parse_series_id
from monitoring.selectors import RANGES
from planner.decisions.models import DecisionRecord
from planner.models import Plan, PoolPlan


class TargetSerializer(serializers.ModelSerializer):
    token = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=True,
        style={"input_type": "password"},
        help_text="Bearer token sent to the target; write-only, never returned.",
    )
    clear_token = serializers.BooleanField(
        write_only=True, required=False, default=False, help_text="Remove the saved token."
    )
    has_token = serializers.SerializerMethodField()
    poll_interval_s = serializers.IntegerField(
        min_value=MIN_POLL_INTERVAL_S, max_value=MAX_POLL_INTERVAL_S, required=False
    )
    plan = serializers.SlugRelatedField(
        slug_field="public_id",
        queryset=Plan.objects.all(),
        required=False,
        allow_null=True,
        help_text="The linked plan's public_id (the id the plan API shows), or null.",
    )
    machines = IdListField(
        queryset=Machine.objects.all(),
        required=False,
        help_text="Ids of the inventory machines it runs on (each once; API_MAX_IDS_PER_LIST).",
    )
    pool_plan = serializers.SlugRelatedField(
        slug_field="public_id",
        queryset=PoolPlan.objects.all(),
        required=False,
        allow_null=True,
        help_text="The public id of a pool plan one of whose models this server serves, or null.",
    )
    decision = serializers.SlugRelatedField(
        slug_field="number",
        queryset=DecisionRecord.objects.all(),
        required=False,
        allow_null=True,
        help_text="The linked decision record's number (the id the decisions API shows), or null.",
    )

    class Meta:
        model = Target
        fields = [
            "id",
            "url",
            "name",
            "kind",
            "base_url",
            "selector",
            "machines",
            "plan",
            "pool_plan",
            "pool_model",
            "plan_scope",
            "decision",
            "poll_interval_s",
            "sample_limit",
            "enabled",
            "token",
            "clear_token",
            "has_token",
            *TARGET_POLL_STATE_FIELDS,
            "created_at",
            "updated_at",
        ]
        read_only_fields = [*TARGET_POLL_STATE_FIELDS, "created_at", "updated_at"]
        extra_kwargs = {"url": {"view_name": "monitoring-api:target-detail"}}

    def get_has_token(self, obj: Target) -> bool:
        return bool(getattr(obj, "has_token_flag", None)) or (
            "token" not in obj.get_deferred_fields() and bool(obj.token)
        )

    def to_representation(self, instance: Target) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["last_error_kind"], data["last_error"] = error_for(
            _user(self), instance.last_error_kind, instance.last_error
        )
        return data


def _user(serializer: serializers.Serializer) -> Any:
    request = serializer.context.get("request")
    return getattr(request, "user", None)


class SeriesKeptSerializer(serializers.Serializer):
    """A deleted target whose series the time-series server did not delete."""

    outcome = serializers.CharField(help_text="kept: the server refused to delete them")
    reason = serializers.CharField()
    selector = serializers.CharField(help_text="The series as a PromQL selector: delete by hand")


class AlertRuleSerializer(serializers.ModelSerializer):
    """The webhook URL is an admin's to set (POST .../webhook/) and to read (null for others)."""

    webhook_url = serializers.SerializerMethodField()

    class Meta:
        model = AlertRule
        fields = [
            "id",
            "name",
            "target",
            "series",
            "comparison",
            "threshold",
            "duration_s",
            "enabled",
            "webhook_url",
            "is_default",
            "created_at",
        ]
        read_only_fields = ["is_default", "created_at"]
        # The rule's target is looked up without its token (one no key reads must not matter).
        extra_kwargs = {"target": {"queryset": Target.objects.defer("token")}}

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_webhook_url(self, rule: AlertRule) -> str | None:
        user = _user(self)
        if is_admin(user):
            return rule.webhook_url
        return None


class AlertRuleWebhookSerializer(serializers.Serializer):
    webhook_url = serializers.CharField(
        allow_blank=True,
        max_length=500,
        help_text="The URL that receives the rule's events; empty removes the webhook.",
    )


class AlertRuleWebhookSecretSerializer(serializers.Serializer):
    webhook_url = serializers.CharField()
    secret = serializers.CharField(
        help_text="Shown once: the key of the X-ServePlan-Signature HMAC-SHA256 header."
    )


class AlertEventSerializer(serializers.ModelSerializer):
    rule_name = serializers.CharField(source="rule.name", read_only=True)
    series = serializers.CharField(source="rule.series", read_only=True)
    target_name = serializers.CharField(source="target.name", read_only=True)
    is_open = serializers.BooleanField(read_only=True)

    class Meta:
        model = AlertEvent
        fields = [
            "id",
            "rule",
            "rule_name",
            "series",
            "target",
            "target_name",
            "opened_at",
            "resolved_at",
            "is_open",
            "value",
            "last_value",
            "message",
        ]


class SeriesQuerySerializer(serializers.Serializer):
    series = serializers.CharField(
        help_text=(
            'Comma-separated series: a key (every label set) or key{label="value"}. '
            "Keys: see monitoring/scrape/keys.py, plus poll.up, poll.consecutive_failures, "
            "poll.duration_ms."
        )
    )
    range = serializers.ChoiceField(choices=list(RANGES), default="1h")
    max_points = serializers.IntegerField(min_value=10, max_value=5000, required=False)

    def validate_series(self, value: str) -> list[str]:
        items = _split_series(value)
        if not items:
            raise serializers.ValidationError("Give at least one series key.")
        if len(items) > 40:
            raise serializers.ValidationError("At most 40 series per request.")
        for item in items:
            _check_series(item)
        return items

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Bound the work of one request: series x points (each point is a step Prometheus
        evaluates, or a bucket the database sums)."""
        points = attrs.get("max_points") or settings.MONITORING_MAX_POINTS_PER_SERIES
        budget = settings.MONITORING_SERIES_MAX_POINTS_PER_REQUEST
        if len(attrs["series"]) * points > budget:
            raise serializers.ValidationError(
                {
                    "max_points": (
                        f"{len(attrs['series'])} series x {points} points is more than "
                        f"{budget} points per request: ask for fewer series or points."
                    )
                }
            )
        return attrs


class FleetSeriesQuerySerializer(SeriesQuerySerializer):
    def validate_series(self, value: str) -> list[str]:
        items = super().validate_series(value)
        for item in items:
            if "{" in item:
                raise serializers.ValidationError(
                    f"{item!r}: fleet series are sums of keys without labels."
                )
        return items


def _check_series(item: str) -> None:
    """Refuse an item that is not `key` or `key{label="value",...}` of a known key."""
    try:
        key, _labels = parse_series_id(item)
    except ValueError:
        raise serializers.ValidationError(
            f'{item[:80]!r} is not a series: write key or key{{label="value"}}.'
        ) from None
    if key not in BY_KEY:
        raise serializers.ValidationError(f"{key[:80]!r} is not a series key.")


def _split_series(value: str) -> list[str]:
    """Split on commas outside braces (label sets contain commas)."""
    items, depth, current = [], 0, []
    for ch in value:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    items.append("".join(current).strip())
    return [i for i in items if i]


class PointsSerializer(serializers.Serializer):
    target = serializers.IntegerField(allow_null=True)
    key = serializers.CharField()
    labels = serializers.DictField(child=serializers.CharField())
    id = serializers.CharField()
    t = serializers.ListField(child=serializers.IntegerField(), help_text="unix ms")
    v = serializers.ListField(child=serializers.FloatField(allow_null=True))


class TimeMarkSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="unix ms")
    end = serializers.IntegerField(allow_null=True, help_text="unix ms; null while under way")
    label = serializers.CharField()
    url = serializers.CharField(allow_blank=True)


class SeriesResponseSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="unix ms")
    end = serializers.IntegerField(help_text="unix ms")
    bucket_s = serializers.FloatField(required=False)
    source = serializers.ChoiceField(choices=["raw", "rollup", "prometheus"])
    series = PointsSerializer(many=True)
    marks = TimeMarkSerializer(
        many=True, required=False, help_text="spans the charts shade, e.g. load benchmarks"
    )
    unavailable = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text=(
            "Present when some targets' time-series server did not answer: their ids (their "
            "series are missing, the others are here)."
        ),
    )


class TileSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="target.pk")
    name = serializers.CharField(source="target.name")
    kind = serializers.CharField(source="target.kind")
    state = serializers.CharField()
    open_alerts = serializers.IntegerField()
    last_error = serializers.CharField()
    last_poll_at = serializers.DateTimeField(source="target.last_poll_at", allow_null=True)
    values = serializers.DictField(child=serializers.FloatField(allow_null=True))


class PollingHealthSerializer(serializers.Serializer):
    lag_s = serializers.FloatField()
    late_targets = serializers.IntegerField()
    missed_last_hour = serializers.IntegerField()
    most_late = serializers.CharField()
    degraded = serializers.BooleanField()


class OverviewSerializer(serializers.Serializer):
    generated_at = serializers.DateTimeField()
    polling = PollingHealthSerializer()
    totals = serializers.DictField(child=serializers.FloatField())
    tiles = TileSerializer(many=True)


class PlanComparisonQuerySerializer(serializers.Serializer):
    window = serializers.ChoiceField(
        choices=list(RANGES), default="1h", help_text="The time window to compare, up to now."
    )
    scope = serializers.ChoiceField(
        choices=[s.value for s in Scope],
        default="replica",
        help_text=(
            "replica: this target against one replica of the plan; plan: every target linked "
            "as a replica of the plan, summed, against the whole plan. A target linked as the "
            "whole plan (Route B instance, Route C pool) is always compared with the plan."
        ),
    )


class CalibrationNoteSerializer(serializers.Serializer):
    profile = serializers.CharField(help_text="The calibration profile's public id.")
    key = serializers.CharField(help_text="GPU type / model family / weight dtype.")
    version = serializers.IntegerField()
    factors = serializers.DictField(child=serializers.FloatField(allow_null=True))
    matches_layout = serializers.BooleanField(
        help_text="Whether the profile was fitted on this GPU, model family and dtype."
    )


class ComparisonPlanSerializer(serializers.Serializer):
    public_id = serializers.CharField()
    title = serializers.CharField()
    model = serializers.CharField(source="model_name")
    route = serializers.CharField()
    replicas = serializers.IntegerField()
    layout = serializers.SerializerMethodField()
    calibration = CalibrationNoteSerializer(allow_null=True)

    def get_layout(self, obj) -> dict:
        layout = obj.replica.layout
        return {
            "gpu": layout.gpu,
            "tp": layout.tp,
            "pp": layout.pp,
            "weight_dtype": layout.weight_dtype,
        }


class ComparisonWarningSerializer(serializers.Serializer):
    code = serializers.ChoiceField(
        choices=[c.value for c in WarningCode], help_text="Stable id of the mismatch."
    )
    message = serializers.CharField()
    target = serializers.CharField(help_text="The target concerned; empty for the whole plan.")


class ComparisonRowSerializer(serializers.Serializer):
    quantity = serializers.ChoiceField(
        choices=[q.value for q in Quantity], help_text="Stable id of the compared quantity."
    )
    label = serializers.CharField()
    unit = serializers.CharField(help_text="blocks, tokens, requests, replicas, tok/s or ms.")
    planned = serializers.FloatField(allow_null=True)
    observed = serializers.FloatField(allow_null=True)
    deviation_pct = serializers.FloatField(
        allow_null=True, help_text="Signed: (observed − planned) ÷ planned × 100."
    )
    within_tolerance = serializers.BooleanField(
        allow_null=True, help_text="null: not judged (context rows, missing values)."
    )
    tolerance_pct = serializers.FloatField(allow_null=True)
    note = serializers.CharField()


class PlanComparisonSerializer(serializers.Serializer):
    plan = ComparisonPlanSerializer()
    scope = serializers.ChoiceField(choices=[s.value for s in Scope])
    targets = serializers.ListField(child=serializers.CharField())
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    warnings = ComparisonWarningSerializer(many=True)
    rows = ComparisonRowSerializer(many=True)
