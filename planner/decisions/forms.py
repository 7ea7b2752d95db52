"""The edit form: the document fields, the five ownership rows and the evidence thresholds."""

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from planner.decisions.guidance import (
    EVIDENCE_SPECS,
    GUIDANCE,
    EvidenceKind,
    PoolKind,
    ResponsibilityKind,
)
from planner.decisions.models import DecisionRecord, EvidenceItem
from planner.decisions.services import EDITABLE_FIELDS


class DecisionForm(forms.ModelForm):
    """Edit a record; `version` carries the version the user started from."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    authors = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        label=_("Authors"),
        widget=forms.SelectMultiple(attrs={"size": 4}),
    )

    class Meta:
        model = DecisionRecord
        fields = [*EDITABLE_FIELDS]
        widgets = {
            "context": forms.Textarea(attrs={"rows": 8}),
            "decision_text": forms.Textarea(attrs={"rows": 4}),
            "alternatives": forms.Textarea(attrs={"rows": 5}),
            "consequences": forms.Textarea(attrs={"rows": 4}),
            "verifiable_sentence": forms.Textarea(attrs={"rows": 2}),
            "pool_kind": forms.Select(attrs={"data-pool-select": ""}),
        }

    def __init__(self, *args: Any, estimates: dict[str, float] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.estimates = estimates or {}
        for kind in ResponsibilityKind.values:
            self.fields[f"resp_{kind}_owner"] = forms.CharField(
                label=_("Owner"), max_length=200, required=False
            )
            self.fields[f"resp_{kind}_mechanism"] = forms.CharField(
                label=_("Mechanism"), required=False, widget=forms.Textarea(attrs={"rows": 3})
            )
        for kind in EvidenceKind.values:
            unit = EVIDENCE_SPECS[kind].unit
            self.fields[f"ev_{kind}_threshold"] = forms.FloatField(
                label=_("Threshold (%(unit)s)") % {"unit": unit}, required=False, min_value=0
            )
            self.fields[f"ev_{kind}_measured_value"] = forms.FloatField(
                label=_("Measured (%(unit)s)") % {"unit": unit}, required=False, min_value=0
            )
            self.fields[f"ev_{kind}_note"] = forms.CharField(
                label=_("Note"), required=False, widget=forms.Textarea(attrs={"rows": 2})
            )
        if self.instance.pk and not self.is_bound:
            self.initial["version"] = self.instance.version
            self.initial["authors"] = list(self.instance.authors.all())
            for row in self.instance.responsibilities.all():
                self.initial[f"resp_{row.kind}_owner"] = row.owner
                self.initial[f"resp_{row.kind}_mechanism"] = row.mechanism
            for item in self.instance.evidence_items.all():
                self.initial[f"ev_{item.kind}_threshold"] = item.threshold
                self.initial[f"ev_{item.kind}_measured_value"] = item.measured_value
                self.initial[f"ev_{item.kind}_note"] = item.note

    def _post_clean(self) -> None:
        # Validation of the record happens in the service (full_clean there); the unsaved
        # instance here has no number yet.
        pass

    def pool_kind_value(self) -> str:
        value = self["pool_kind"].value()
        return value if value in PoolKind.values else PoolKind.DEDICATED

    def responsibility_rows(self) -> list[dict[str, Any]]:
        """Return each ownership row with its fields and the guidance for both pool kinds."""
        rows = []
        for kind, label in ResponsibilityKind.choices:
            rows.append(
                {
                    "kind": kind,
                    "label": label,
                    "owner": self[f"resp_{kind}_owner"],
                    "mechanism": self[f"resp_{kind}_mechanism"],
                    "guidance": [
                        (pool, GUIDANCE[(kind, pool)], pool == self.pool_kind_value())
                        for pool in PoolKind.values
                    ],
                }
            )
        return rows

    def evidence_rows(self) -> list[dict[str, Any]]:
        """Return each evidence item with its fields, hint and the current pass/fail."""
        items = {}
        if self.instance.pk:
            items = {e.kind: e for e in self.instance.evidence_items.all()}
        rows = []
        for kind, label in EvidenceKind.choices:
            spec = EVIDENCE_SPECS[kind]
            item: EvidenceItem | None = items.get(kind)
            rows.append(
                {
                    "kind": kind,
                    "label": label,
                    "hint": spec.hint,
                    "unit": spec.unit,
                    "comparison": "≤" if spec.lower_is_better else "≥",
                    "threshold": self[f"ev_{kind}_threshold"],
                    "measured": self[f"ev_{kind}_measured_value"],
                    "note": self[f"ev_{kind}_note"],
                    "item": item,
                    "estimate": self.estimates.get(kind),
                }
            )
        return rows

    def service_kwargs(self) -> dict[str, Any]:
        """Return the cleaned data shaped as the services' keyword arguments."""
        data = self.cleaned_data
        kwargs: dict[str, Any] = {name: data.get(name) for name in EDITABLE_FIELDS}
        kwargs["authors"] = list(data.get("authors") or [])
        kwargs["responsibilities"] = {
            kind: {
                "owner": data.get(f"resp_{kind}_owner", ""),
                "mechanism": data.get(f"resp_{kind}_mechanism", ""),
            }
            for kind in ResponsibilityKind.values
        }
        kwargs["evidence"] = {
            kind: {
                "threshold": data.get(f"ev_{kind}_threshold"),
                "measured_value": data.get(f"ev_{kind}_measured_value"),
                "note": data.get(f"ev_{kind}_note", ""),
            }
            for kind in EvidenceKind.values
        }
        return kwargs


class AcceptForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    with_open_evidence = forms.BooleanField(
        required=False,
        label=_("Accept with open evidence"),
        help_text=_(
            "Some measurements are missing or failing. Accepting anyway marks the record "
            "“accepted with open evidence”, visibly and permanently."
        ),
    )


class SupersedeForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    superseded_by = forms.ModelChoiceField(
        queryset=DecisionRecord.objects.none(),
        label=_("Superseded by"),
        help_text=_("The record that replaces this one. This one becomes read-only."),
    )

    def __init__(self, *args: Any, decision: DecisionRecord, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["superseded_by"]
        field.queryset = (  # type: ignore[attr-defined]
            DecisionRecord.objects.exclude(pk=decision.pk)
            .filter(status__in=["proposed", "accepted"])
            .order_by("-number")
        )


class DiffForm(forms.Form):
    a = forms.IntegerField(label=_("From revision"), min_value=1)
    b = forms.IntegerField(label=_("To revision"), min_value=1)
