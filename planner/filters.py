"""One FilterSet for the saved plans, shared by the list page and the API."""

import django_filters as filters
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from planner.models import Plan, Route


class PlanFilterSet(filters.FilterSet):
    model = filters.CharFilter(method="filter_model", label=_("Model"))
    route = filters.ChoiceFilter(choices=Route.choices, label=_("Route"))
    author = filters.CharFilter(field_name="author__username", label=_("Author"))
    machine = filters.CharFilter(method="filter_machine", label=_("Machine (hostname)"))

    class Meta:
        model = Plan
        fields = ["model", "route", "author", "machine"]

    def filter_model(self, queryset: QuerySet[Plan], name: str, value: str) -> QuerySet[Plan]:
        value = value.strip()
        return queryset.filter(Q(model_slug=value) | Q(model_name__icontains=value))

    def filter_machine(self, queryset: QuerySet[Plan], name: str, value: str) -> QuerySet[Plan]:
        return queryset.on_host(value)
