"""FilterSets shared by the monitoring pages and the API."""

from __future__ import annotations

import django_filters
from django.utils.translation import gettext_lazy as _

from monitoring.models import AlertEvent, AlertRule, Target, TargetKind


class TargetFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", label=_("name contains"))
    kind = django_filters.ChoiceFilter(choices=TargetKind.choices, label=_("kind"))
    enabled = django_filters.BooleanFilter(label=_("enabled"))
    last_status = django_filters.CharFilter(label=_("last status"))

    class Meta:
        model = Target
        fields = ["name", "kind", "enabled", "last_status"]


class AlertEventFilter(django_filters.FilterSet):
    target = django_filters.ModelChoiceFilter(
        queryset=Target.objects.defer("token"), label=_("target")
    )
    rule = django_filters.ModelChoiceFilter(queryset=AlertRule.objects.all(), label=_("rule"))
    open = django_filters.BooleanFilter(
        field_name="resolved_at", lookup_expr="isnull", label=_("open")
    )

    class Meta:
        model = AlertEvent
        fields = ["target", "rule", "open"]


class AlertRuleFilter(django_filters.FilterSet):
    target = django_filters.ModelChoiceFilter(
        queryset=Target.objects.defer("token"), label=_("target")
    )

    class Meta:
        model = AlertRule
        fields = ["target", "series", "enabled"]
