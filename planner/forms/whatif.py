"""'What if': change one (or a few) answers of a saved plan and evaluate again."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from planner.forms.wizard import KV_DTYPE_CHOICES, WEIGHT_DTYPE_CHOICES
from planner.presentation.changes import FORM_FIELDS

# value -> (label, speed in Gb/s, NIC kind)
LINKS: dict[str, tuple[Any, float, str]] = {
    "eth10": (_("10 GbE"), 10.0, "ethernet"),
    "eth25": (_("25 GbE"), 25.0, "ethernet"),
    "eth100": (_("100 GbE"), 100.0, "ethernet"),
    "roce200": (_("200 Gb RoCE"), 200.0, "roce"),
    "ib400": (_("400 Gb InfiniBand"), 400.0, "infiniband"),
}
UNCHANGED = [("", _("(unchanged)"))]
NO_CALIBRATION = "none"


def concurrency_field(label: Any) -> forms.IntegerField:
    """Return the optional "concurrent sequences" answer of a what-if (1 to a million)."""
    return forms.IntegerField(
        label=label,
        required=False,
        min_value=1,
        max_value=1_000_000,
        error_messages={
            "min_value": _("Enter between 1 and 1000000."),
            "max_value": _("Enter between 1 and 1000000."),
        },
    )


def _gpu_choices() -> list[tuple[str, str]]:
    from catalog.data import load_gpus

    return [(slug, gpu.name) for slug, gpu in sorted(load_gpus().items())]


class WhatIfForm(forms.Form):
    machine_count = forms.IntegerField(
        label=_("Number of machines"),
        required=False,
        min_value=1,
        max_value=1024,
        help_text=_("Fewer keeps the first ones; more adds copies of the last machine."),
        error_messages={
            "min_value": _("Enter between 1 and 1024."),
            "max_value": _("Enter between 1 and 1024."),
        },
    )
    gpu = forms.ChoiceField(label=_("GPU type"), required=False)
    link = forms.ChoiceField(
        label=_("Network between machines"),
        required=False,
        choices=UNCHANGED + [(k, v[0]) for k, v in LINKS.items()],
    )
    weight_dtype = forms.ChoiceField(
        label=_("Weight precision"), required=False, choices=UNCHANGED + WEIGHT_DTYPE_CHOICES
    )
    kv_cache_dtype = forms.ChoiceField(
        label=_("KV-cache precision"), required=False, choices=UNCHANGED + KV_DTYPE_CHOICES
    )
    max_model_len = forms.IntegerField(
        label=_("Maximum context (tokens)"),
        required=False,
        min_value=16,
        error_messages={"min_value": _("Enter at least 16 tokens.")},
    )
    rope_scaling_factor = forms.ChoiceField(
        label=_("Extend the context with YaRN"),
        required=False,
        choices=UNCHANGED + [("1", _("no")), ("2", "×2"), ("4", "×4"), ("8", "×8")],
    )
    concurrency = concurrency_field(_("Concurrent sequences"))

    calibration = forms.ChoiceField(
        label=_("Calibration profile"),
        required=False,
        help_text=_(
            "Correction factors fitted from your servers (Monitoring → Calibration): the new "
            "result beside this one shows the predictions before and after calibration."
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from planner.models import CalibrationProfile

        profiles = CalibrationProfile.objects.order_by("key", "-version").only(
            "public_id", "key", "version"
        )
        self.fields["gpu"].choices = [*UNCHANGED, *_gpu_choices()]
        self.fields["calibration"].choices = [
            *UNCHANGED,
            (NO_CALIBRATION, _("none: the engine's own constants")),
            *[(str(p.public_id), f"{p.key} v{p.version}") for p in profiles],
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not any(data.get(k) for k in self.fields):
            raise forms.ValidationError(_("Change at least one answer."))
        return data

    def changed_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Return a copy of `spec` with this form's changes applied."""
        d = self.cleaned_data
        new = copy.deepcopy(spec)
        new.pop("title", None)
        hardware = dict(new.get("hardware") or {})
        if d.get("link"):
            _label, speed, kind = LINKS[d["link"]]
            hardware["link_override"] = {"speed_gbps": speed, "kind": kind}
        if d.get("machine_count"):
            hardware["machine_count"] = d["machine_count"]
        if d.get("gpu"):
            hardware["gpu_override"] = d["gpu"]
        if hardware:
            new["hardware"] = hardware
        for key in ("weight_dtype", "kv_cache_dtype", "max_model_len"):
            if d.get(key):
                new[key] = d[key]
        if d.get("rope_scaling_factor"):
            new["rope_scaling_factor"] = float(d["rope_scaling_factor"])
        if d.get("weight_dtype"):
            new["pre_quantized"] = d["weight_dtype"] in {"int8", "int4"}
        if d.get("concurrency"):
            new["workload"] = {**(new.get("workload") or {}), "concurrency": d["concurrency"]}
        if d.get("calibration") == NO_CALIBRATION:
            new.pop("calibration", None)
        elif d.get("calibration"):
            new["calibration"] = d["calibration"]
        return new

    def requested_answers(self) -> list[str]:
        """Return the answers this form asks to change (keys of presentation.changes.ANSWERS)."""
        return [FORM_FIELDS[name] for name in self.fields if self.cleaned_data.get(name)]

    def describe(self) -> list[tuple[str, str]]:
        """Return (field label, new value label) for every change."""
        out = []
        for name, fld in self.fields.items():
            value = self.cleaned_data.get(name)
            if value:
                choices = dict(getattr(fld, "choices", []) or [])
                out.append((str(fld.label), str(choices.get(value, value))))
        return out
