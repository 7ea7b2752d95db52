"""The "several models" wizard: machines once, then one row per model (a formset).

The page builds the same pool spec the API takes (`models: [...]` with one `hardware`), so the
engine checks it again and its errors come back to the row and field they name.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.validators import RegexValidator
from django.forms import formset_factory
from django.utils.translation import gettext_lazy as _

from planner.engine.pool.spec import DEFAULT_PRIORITY, MAX_POOL_MODELS, PRIORITY_RANGE
from planner.forms.wizard import WEIGHT_DTYPE_CHOICES, model_choices
from planner.forms.wizard.load_step import optional_positive, positive_int

MIN_POOL_MODELS = 2
DEFAULT_ROWS = 3
# An engine error path of a model row: models[2].workload.ttft_slo_ms -> row 2, its field.
_ROW_PATH = re.compile(r"^models\[(\d+)\](?:\.(.+))?$")
# Where a row's engine error is shown: the form field that sets that part of the spec.
_FIELD_OF_PATH = {
    "name": "name",
    "model": "model",
    "model.slug": "model",
    "weight_dtype": "weight_dtype",
    "max_model_len": "max_model_len",
    "priority": "priority",
    "workload.concurrency": "concurrency",
    "workload.avg_input_tokens": "avg_input_tokens",
    "workload.avg_output_tokens": "avg_output_tokens",
    "workload.ttft_slo_ms": "ttft_slo_ms",
    "workload.itl_slo_ms": "itl_slo_ms",
    "pinned_layout": "pinned_tp",
    "pinned_layout.tp": "pinned_tp",
    "pinned_layout.replicas": "pinned_replicas",
}


class PoolOptionsForm(forms.Form):
    """What holds for the whole pool beyond its machines: may small models share GPUs?"""

    share_gpus = forms.BooleanField(
        required=False,
        label=_("Let small models share a GPU"),
        help_text=_(
            "Two models whose single-GPU server fits in half a GPU may then run side by side on "
            "one, each with half its memory share. Each then gets about half the GPU's time, so "
            "its predicted speed is lower; a model whose SLO that would break keeps a GPU of its "
            "own."
        ),
    )

    def spec_part(self) -> dict[str, Any]:
        return {"share_gpus": self.cleaned_data["share_gpus"]}


class PoolModelForm(forms.Form):
    """One model of the pool: what it is, its context, its load and SLOs, its priority."""

    name = forms.CharField(
        label=_("Name"),
        required=False,
        max_length=40,
        validators=[
            RegexValidator(
                r"^[a-z0-9][a-z0-9-]*$",
                _("Use lower-case letters, digits and dashes, starting with a letter or digit."),
            )
        ],
        help_text=_("Its route and file names in the bundle; from the model when empty."),
    )
    model = forms.ChoiceField(label=_("Model"), required=False)
    weight_dtype = forms.ChoiceField(
        label=_("Weight precision"),
        required=False,
        help_text=_("The checkpoint's own when empty."),
    )
    max_model_len = positive_int(_("Maximum context (tokens)"), 128, 10_000_000, initial=8192)
    concurrency = positive_int(_("Requests in flight"), 1, 1_000_000, initial=16)
    avg_input_tokens = positive_int(_("Prompt tokens (mean)"), 1, 10_000_000, initial=1024)
    avg_output_tokens = positive_int(_("Output tokens (mean)"), 1, 10_000_000, initial=256)
    ttft_slo_ms = optional_positive(_("TTFT SLO (ms)"), _("Optional."))
    itl_slo_ms = optional_positive(_("Time per output token SLO (ms)"), _("Optional."))
    priority = positive_int(
        _("Priority"),
        *PRIORITY_RANGE,
        initial=DEFAULT_PRIORITY,
        help_text=_("1 (low) to 10 (high): who keeps GPUs when they run short."),
    )
    pinned_tp = positive_int(_("Pinned TP"), 1, 64, required=False)
    pinned_replicas = positive_int(_("Pinned replicas"), 1, 1024, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = [("", "—"), *model_choices()]
        self.fields["weight_dtype"].choices = [
            ("", _("The checkpoint's own")),
            *WEIGHT_DTYPE_CHOICES,
        ]

    @property
    def is_blank(self) -> bool:
        """A row without a model is skipped (the page offers more rows than it needs)."""
        return not (self.cleaned_data or {}).get("model")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("model") and (data.get("name") or data.get("pinned_tp")):
            self.add_error("model", _("Pick the model of this row, or clear the row."))
        if data.get("pinned_replicas") and not data.get("pinned_tp"):
            self.add_error("pinned_tp", _("A pinned layout needs its TP size."))
        return data

    def spec_part(self) -> dict[str, Any]:
        """Return this row as one entry of the pool spec's `models` list."""
        d = self.cleaned_data
        workload: dict[str, Any] = {
            "concurrency": d["concurrency"],
            "avg_input_tokens": d["avg_input_tokens"],
            "avg_output_tokens": d["avg_output_tokens"],
        }
        for key in ("ttft_slo_ms", "itl_slo_ms"):
            if d.get(key):
                workload[key] = d[key]
        row: dict[str, Any] = {
            "model": d["model"],
            "max_model_len": d["max_model_len"],
            "priority": d["priority"],
            "workload": workload,
        }
        if d.get("name"):
            row["name"] = d["name"]
        if d.get("weight_dtype"):
            row["weight_dtype"] = d["weight_dtype"]
        if d.get("pinned_tp"):
            row["pinned_layout"] = {"tp": d["pinned_tp"], "replicas": d.get("pinned_replicas") or 1}
        return row


class BasePoolModelFormSet(forms.BaseFormSet):
    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        chosen = [f for f in self.forms if not f.is_blank]
        if len(chosen) < MIN_POOL_MODELS:
            raise forms.ValidationError(
                _("Pick at least %(n)s models: a pool plan places several models.")
                % {"n": MIN_POOL_MODELS}
            )

    def models(self) -> list[dict[str, Any]]:
        """Return the spec's `models` list, one entry per row with a model."""
        return [f.spec_part() for f in self.forms if not f.is_blank]

    def rows_by_index(self) -> list[PoolModelForm]:
        """Return the rows with a model, in the order of the spec's `models` list."""
        return [f for f in self.forms if not f.is_blank]


PoolModelFormSet = formset_factory(
    PoolModelForm,
    formset=BasePoolModelFormSet,
    extra=0,
    max_num=MAX_POOL_MODELS,
    validate_max=True,
    absolute_max=MAX_POOL_MODELS,
)


def model_formset(data: Any = None, *, rows: int = DEFAULT_ROWS) -> BasePoolModelFormSet:
    """Return the model rows: `rows` empty ones on a new page (2 to the pool's maximum)."""
    rows = max(MIN_POOL_MODELS, min(MAX_POOL_MODELS, rows))
    initial = [{} for _ in range(rows)] if data is None else None
    return PoolModelFormSet(data, prefix="models", initial=initial)


def place_engine_errors(
    errors: dict[str, str], formset: BasePoolModelFormSet, others: list[str]
) -> None:
    """Put each engine error on the row and field it names; anything else goes to `others`."""
    rows = formset.rows_by_index()
    for path, text in errors.items():
        match = _ROW_PATH.match(path)
        if match is None or int(match.group(1)) >= len(rows):
            others.append(f"{path}: {text}")
            continue
        row, rest = rows[int(match.group(1))], match.group(2) or ""
        field = _FIELD_OF_PATH.get(rest)
        if field is None:
            where = rest or str(_("this model"))
            row.add_error(None, f"{where}: {text}")
        else:
            row.add_error(field, text)
