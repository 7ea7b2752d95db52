"""Wizard step 5: how the team operates (the questions behind the Ray signals)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from planner.forms.wizard.load_step import positive_int

# (field, question, why it matters) — DOMAIN.md §4, in plain language.
OPERATION_QUESTIONS: list[tuple[str, Any, Any]] = [
    (
        "models_change_often",
        _("Will you swap or add models often (every few weeks or more)?"),
        _("Ray Serve redeploys models without editing every node; a fixed model needs none."),
    ),
    (
        "multi_model_pool",
        _("Will several models share this pool of GPUs?"),
        _("Sharing GPUs between models is what Ray's scheduler is best at."),
    ),
    (
        "self_healing_slo",
        _("Do you have an explicit availability target that needs automatic recovery?"),
        _("Ray restarts failed replicas by itself; without a written target this rarely pays off."),
    ),
    (
        "ray_in_use",
        _("Does Ray already run other workloads on these machines?"),
        _("Reusing a Ray estate you already operate costs little; introducing one costs a lot."),
    ),
    (
        "avoid_manual_nccl",
        _("Would you rather not manage per-node NCCL launch settings by hand?"),
        _("Ray starts the workers on every node; it does not make the network any faster."),
    ),
    (
        "team_ray_experience",
        _("Has your team operated a Ray cluster before?"),
        _("Ray adds a head node, versions to keep in step and logs spread over nodes."),
    ),
    (
        "gateway_available",
        _("Is there already a gateway or load balancer in front of your services?"),
        _("An existing gateway can spread requests over replicas without Ray Serve."),
    ),
]


class OperationsStepForm(forms.Form):
    title = forms.CharField(
        label=_("Plan title (optional)"),
        required=False,
        max_length=200,
        help_text=_("Defaults to the model, route and layout."),
    )
    pinned_tp = positive_int(_("Also evaluate TP (optional)"), 1, 1024, required=False)
    pinned_pp = positive_int(_("× PP"), 1, 64, required=False)
    pinned_replicas = positive_int(_("× replicas"), 1, 100_000, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, question, why in OPERATION_QUESTIONS:
            self.fields[name] = forms.BooleanField(label=question, help_text=why, required=False)

    def question_fields(self) -> list[forms.BoundField]:
        return [self[name] for name, _q, _w in OPERATION_QUESTIONS]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if (data.get("pinned_pp") or data.get("pinned_replicas")) and not data.get("pinned_tp"):
            self.add_error("pinned_tp", _("Enter the TP size of the layout to compare."))
        return data

    def spec_part(self) -> dict[str, Any]:
        d = self.cleaned_data
        part: dict[str, Any] = {
            "operations": {name: bool(d.get(name)) for name, _q, _w in OPERATION_QUESTIONS}
        }
        if d.get("pinned_tp"):
            part["pinned_layout"] = {
                "tp": d["pinned_tp"],
                "pp": d.get("pinned_pp") or 1,
                "replicas": d.get("pinned_replicas") or 1,
            }
        if d.get("title"):
            part["title"] = d["title"]
        return part
