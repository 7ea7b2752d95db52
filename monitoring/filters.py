"""FilterSets shared by the monitoring pages and the API."""

from __future__ import annotations

from typing import Any

import django_filters
from django.utils.translation import gettext
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
    rule = django_filters.ModelChoiceFilter(
        queryset=AlertRule.objects.select_related("target").order_by("name", "target__name"),
        label=_("rule"),
    )
    # Open or resolved, or any: not Django's "Unknown / Yes / No" of a null boolean.
    open = django_filters.ChoiceFilter(
        choices=(("true", _("open")), ("false", _("resolved"))),
        empty_label=_("any"),
        method="filter_open",
        label=_("state"),
    )

    class Meta:
        model = AlertEvent
        fields = ["target", "rule", "open"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # One rule per target shares its name ("Target down for 3 polls" nine times): each
        # choice says whose rule it is.
        self.form.fields["rule"].label_from_instance = _rule_label

    def filter_open(self, queryset: Any, name: str, value: str) -> Any:
        return queryset.filter(resolved_at__isnull=value == "true")


def _rule_label(rule: AlertRule) -> str:
    whose = rule.target.name if rule.target_id else gettext("every target")
    return gettext("%(rule)s · %(whose)s") % {"rule": rule.name, "whose": whose}


class AlertRuleFilter(django_filters.FilterSet):
    target = django_filters.ModelChoiceFilter(
        queryset=Target.objects.defer("token"), label=_("target")
    )

    class Meta:
        model = AlertRule
        fields = ["target", "series", "enabled"]
