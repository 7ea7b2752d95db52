"""'What if' on a pool plan: add or remove a model, change one model's load, or the machines."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from planner.engine.pool.spec import MAX_POOL_MODELS, name_from
from planner.forms.whatif import concurrency_field
from planner.forms.wizard import model_choices
from planner.services.resolve import MAX_WHAT_IF_MACHINES

NONE = [("", _("(none)"))]
# Interpolated when shown, in the reader's language (a lazy string's % would fix it at import).
MACHINES_RANGE = lazy(
    lambda: gettext("Enter between 1 and %(n)s.") % {"n": MAX_WHAT_IF_MACHINES}, str
)()
MIN_POOL_MODELS = 2  # with one model left it is a single-model plan, which has its own wizard
ADDED_MODEL_CONTEXT = 8192  # an added model's max_model_len, as the wizard's rows start


class PoolWhatIfForm(forms.Form):
    add_model = forms.ChoiceField(
        label=_("Add a model"),
        required=False,
        help_text=_("At an 8,192-token context and default priority; the wizard sets more."),
    )
    add_concurrency = concurrency_field(_("serving this many concurrent sequences"))
    remove_model = forms.ChoiceField(label=_("Remove a model"), required=False)
    load_model = forms.ChoiceField(label=_("Change the load of"), required=False)
    concurrency = concurrency_field(_("to this many concurrent sequences"))
    machine_count = forms.IntegerField(
        label=_("Number of machines"),
        required=False,
        min_value=1,
        max_value=MAX_WHAT_IF_MACHINES,
        help_text=_("Fewer keeps the first ones; more adds copies of the last machine."),
        error_messages={"min_value": MACHINES_RANGE, "max_value": MACHINES_RANGE},
    )

    def __init__(self, *args: Any, models: list[str], **kwargs: Any) -> None:
        """`models`: the engine's name of each model of the spec, in the spec's order."""
        super().__init__(*args, **kwargs)
        choices = [(name, name) for name in models]
        self.models = models
        for field in ("remove_model", "load_model"):
            self.fields[field].choices = NONE + choices
            self.fields[field].widget.attrs["translate"] = "no"  # model names, not words
        self.fields["add_model"].choices = NONE + model_choices()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        remove, load, concurrency = (
            data.get("remove_model"),
            data.get("load_model"),
            data.get("concurrency"),
        )
        add = data.get("add_model")
        answers = (add, data.get("add_concurrency"), remove, load, concurrency)
        if not any(answers) and not data.get("machine_count"):
            raise forms.ValidationError(_("Change at least one answer."))
        if add and not data.get("add_concurrency"):
            self.add_error("add_concurrency", _("Enter the added model's number of sequences."))
        if data.get("add_concurrency") and not add:
            self.add_error("add_model", _("Choose the model to add."))
        if add and len(self.models) + 1 - bool(remove) > MAX_POOL_MODELS:
            self.add_error(
                "add_model",
                _("A pool holds at most %(n)s models.") % {"n": MAX_POOL_MODELS},
            )
        if load and not concurrency:
            self.add_error("concurrency", _("Enter the model's new number of sequences."))
        if concurrency and not load:
            self.add_error("load_model", _("Choose the model whose load changes."))
        if remove and remove == load:
            self.add_error("load_model", _("This model is the one being removed."))
        if remove and len(self.models) - 1 < MIN_POOL_MODELS:
            self.add_error(
                "remove_model",
                _(
                    "A pool keeps at least two models: plan the remaining one with the "
                    "single-model wizard."
                ),
            )
        return data

    def changed_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Return a copy of the pool spec with this form's changes applied."""
        d = self.cleaned_data
        new = copy.deepcopy(spec)
        new.pop("title", None)
        models = [m for m in new.get("models") or [] if isinstance(m, dict)]
        for raw, name in zip(models, self.models, strict=False):
            raw["name"] = name  # a default name stays the same when the others change
        if d.get("remove_model"):
            models = [m for m in models if m.get("name") != d["remove_model"]]
        if d.get("load_model"):
            for m in models:
                if m.get("name") == d["load_model"]:
                    m["workload"] = {**(m.get("workload") or {}), "concurrency": d["concurrency"]}
        if d.get("add_model"):
            models.append(
                {
                    "name": self.added_name(),
                    "model": d["add_model"],
                    "max_model_len": ADDED_MODEL_CONTEXT,
                    "workload": {"concurrency": d["add_concurrency"]},
                }
            )
        new["models"] = models
        if d.get("machine_count"):
            new["hardware"] = {**(new.get("hardware") or {}), "machine_count": d["machine_count"]}
        return new

    def added_name(self) -> str:
        """Return the pool's name for the added model: its slug, made unique in the pool."""
        # 36 characters leave room for a "-NN" suffix within the 40 a name may have.
        base = name_from(self.cleaned_data["add_model"], length=36) or "model"
        taken = set(self.models)
        name, n = base, 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        return name

    def describe(self) -> list[str]:
        """Return each change in words, for the saved plan's title and the page."""
        d = self.cleaned_data
        out = []
        if d.get("add_model"):
            out.append(
                str(_("with %(name)s at %(n)s sequences"))
                % {"name": self.added_name(), "n": d["add_concurrency"]}
            )
        if d.get("remove_model"):
            out.append(str(_("without %(name)s")) % {"name": d["remove_model"]})
        if d.get("load_model"):
            out.append(
                str(_("%(name)s at %(n)s sequences"))
                % {"name": d["load_model"], "n": d["concurrency"]}
            )
        if d.get("machine_count"):
            out.append(str(_("on %(n)s machines")) % {"n": d["machine_count"]})
        return out
