"""One FilterSet for the decision list page and the API."""

import django_filters as filters
from django import forms
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from inventory.models import PoolKind
from planner.decisions.models import DecisionRecord, ExecutorBackend, Status
from planner.models import Route


class DecisionRecordFilterSet(filters.FilterSet):
    q = filters.CharFilter(method="search", label=_("Search"))
    status = filters.ChoiceFilter(choices=Status.choices, label=_("Status"))
    owner = filters.CharFilter(method="filter_owner", label=_("Owner"))
    model = filters.CharFilter(method="filter_model", label=_("Model"))
    route = filters.ChoiceFilter(choices=Route.choices, label=_("Route"))
    pool_kind = filters.ChoiceFilter(choices=PoolKind.choices, label=_("Pool"))
    executor_backend = filters.ChoiceFilter(
        choices=ExecutorBackend.choices, label=_("Executor backend")
    )
    open_evidence = filters.BooleanFilter(
        field_name="accepted_with_open_evidence",
        label=_("Accepted with open evidence"),
        widget=forms.Select(choices=[("", _("Any")), ("true", _("Yes")), ("false", _("No"))]),
    )
    ordering = filters.OrderingFilter(
        fields=(("number", "number"), ("updated_at", "updated_at"), ("title", "title")),
        choices=[
            ("-number", _("Newest number first")),
            ("number", _("Oldest number first")),
            ("-updated_at", _("Recently updated first")),
            ("updated_at", _("Least recently updated first")),
            ("title", _("Title, A to Z")),
            ("-title", _("Title, Z to A")),
        ],
        label=_("Sort by"),
    )

    class Meta:
        model = DecisionRecord
        fields: list[str] = []  # every filter is declared above, in display order

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        condition = Q()
        for term in value.split():
            digits = term.upper().removeprefix("DR-")
            term_q = (
                Q(title__icontains=term)
                | Q(context__icontains=term)
                | Q(verifiable_sentence__icontains=term)
            )
            if digits.isdigit():
                term_q |= Q(number=int(digits))
            condition &= term_q
        return queryset.filter(condition)

    def filter_owner(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """Match a responsibility owner, an author's user name or the creator."""
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(responsibilities__owner__icontains=value)
            | Q(authors__username__iexact=value)
            | Q(created_by__username__iexact=value)
        ).distinct()

    def filter_model(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(Q(model_name__icontains=value) | Q(plan__model_slug__iexact=value))
