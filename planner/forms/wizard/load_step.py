"""Wizard step 3: the load (arrival shape, lengths, SLOs), each field with its allowed range."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from planner.forms.wizard.choices import ARRIVAL_CHOICES, TRAFFIC_CHOICES


def positive_int(label: Any, lo: int, hi: int, **kwargs: Any) -> forms.IntegerField:
    message = _("Enter a whole number between %(lo)s and %(hi)s.") % {"lo": lo, "hi": hi}
    return forms.IntegerField(
        label=label,
        min_value=lo,
        max_value=hi,
        error_messages={"invalid": message, "min_value": message, "max_value": message},
        **kwargs,
    )


def optional_positive(label: Any, help_text: Any) -> forms.FloatField:
    message = _("Leave empty, or enter a number above 0.")
    return forms.FloatField(
        label=label,
        required=False,
        min_value=0.001,
        help_text=help_text,
        error_messages={"invalid": message, "min_value": message},
    )


def optional_bounded(
    field_class: type[forms.Field],
    label: Any,
    bounds: tuple[float, float],
    help_text: Any,
    message: Any,
) -> forms.Field:
    """Return an optional number field between `bounds` with one message for every error."""
    return field_class(
        label=label,
        required=False,
        min_value=bounds[0],
        max_value=bounds[1],
        help_text=help_text,
        error_messages={"invalid": message, "min_value": message, "max_value": message},
    )


class LoadStepForm(forms.Form):
    concurrency = positive_int(
        _("Concurrent sequences at peak"),
        1,
        1_000_000,
        help_text=_("How many requests are generating at the same time at the busiest hour."),
    )
    avg_input_tokens = positive_int(
        _("Typical prompt length (tokens)"), 1, 10_000_000, help_text=_("Input tokens per request.")
    )
    avg_output_tokens = positive_int(
        _("Typical answer length (tokens)"),
        1,
        10_000_000,
        help_text=_("Output tokens per request."),
    )
    traffic_shape = forms.ChoiceField(
        label=_("Traffic over the day"), choices=TRAFFIC_CHOICES, widget=forms.RadioSelect
    )
    peak_qps = optional_positive(_("Peak requests per second (optional)"), "")
    ttft_slo_ms = optional_positive(
        _("Time-to-first-token target, ms (optional)"),
        _("The planner flags layouts that miss it."),
    )
    itl_slo_ms = optional_positive(
        _("Inter-token latency target, ms (optional)"),
        _("Time between streamed tokens; 50 ms reads as fluent."),
    )
    arrival = forms.ChoiceField(
        label=_("How requests arrive"),
        choices=ARRIVAL_CHOICES,
        initial="closed",
        required=False,
        widget=forms.RadioSelect,
    )
    request_rate_per_s = optional_positive(
        _("Requests per second (Poisson arrivals)"),
        _("Required when requests arrive at a rate."),
    )
    burst_size = optional_bounded(
        forms.IntegerField,
        _("Requests in the burst"),
        (1, 100_000),
        _("Required when requests arrive in one burst."),
        _("Leave empty, or enter a whole number from 1 to 100000."),
    )
    input_tokens_sd = optional_positive(
        _("Prompt length spread, ± tokens (optional)"), _("Standard deviation; empty: fixed.")
    )
    output_tokens_sd = optional_positive(
        _("Answer length spread, ± tokens (optional)"), _("Standard deviation; empty: fixed.")
    )
    shared_prefix_fraction = optional_bounded(
        forms.FloatField,
        _("Share of each prompt served from the prefix cache (optional)"),
        (0.0, 0.99),
        _("0 to 0.99: the common system prompt or document over the whole prompt."),
        _("Leave empty, or enter a number from 0 to 0.99."),
    )
    shared_prefixes = forms.BooleanField(
        label=_("Prompts share long prefixes (RAG, agents, a long system prompt)"),
        required=False,
        help_text=_(
            "Prefix caching then matters; dynamic text at the start of prompts defeats it."
        ),
    )

    def clean(self) -> dict[str, Any]:
        d = super().clean() or {}
        arrival = d.get("arrival") or "closed"
        if arrival == "poisson" and not d.get("request_rate_per_s"):
            self.add_error("request_rate_per_s", _("Enter the request rate for Poisson arrivals."))
        if arrival == "burst" and not d.get("burst_size"):
            self.add_error("burst_size", _("Enter how many requests the burst sends."))
        return d

    def spec_part(self) -> dict[str, Any]:
        d = self.cleaned_data
        workload: dict[str, Any] = {
            "concurrency": d["concurrency"],
            "avg_input_tokens": d["avg_input_tokens"],
            "avg_output_tokens": d["avg_output_tokens"],
            "traffic_shape": d["traffic_shape"],
            "shared_prefixes": bool(d.get("shared_prefixes")),
        }
        for key in ("peak_qps", "ttft_slo_ms", "itl_slo_ms"):
            if d.get(key):
                workload[key] = d[key]
        workload["arrival"] = d.get("arrival") or "closed"
        for key in (
            "request_rate_per_s",
            "burst_size",
            "input_tokens_sd",
            "output_tokens_sd",
            "shared_prefix_fraction",
        ):
            if d.get(key):
                workload[key] = d[key]
        return {"workload": workload}
