"""Wizard steps 1 and 2: the model (catalog, config.json or saved spec) and its precision and
context.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog import ArchitectureError, from_hf_config
from core import json_input
from planner.engine.profiling import VersionError, parse_version
from planner.engine.vllm_flags import VLLM_VERSION
from planner.forms.wizard.choices import KV_DTYPE_CHOICES, WEIGHT_DTYPE_CHOICES, model_choices


class ModelStepForm(forms.Form):
    source = forms.ChoiceField(
        label=_("Where does the model come from?"),
        choices=[("catalog", _("Pick from the catalog")), ("paste", _("Paste its config.json"))],
        widget=forms.RadioSelect,
        initial="catalog",
    )
    model = forms.ChoiceField(
        label=_("Model"),
        required=False,
        help_text=_(
            "Models in the inventory come first; the catalog holds real config.json values."
        ),
    )
    config_json = forms.CharField(
        label=_("config.json"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text=_("The model's Hugging Face config.json, pasted as is."),
    )
    name = forms.CharField(
        label=_("Name of the pasted model"),
        required=False,
        max_length=150,
        help_text=_("Also the Hugging Face repository served, e.g. my-org/my-model."),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].choices = model_choices()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("source") == "paste":
            text = (data.get("config_json") or "").strip()
            if not text:
                self.add_error("config_json", _("Paste the model's config.json here."))
                return data
            try:
                config = json_input.loads(text)
            except json_input.JsonInputError as exc:
                self.add_error(
                    "config_json",
                    _("This JSON is refused: %(msg)s at %(path)s.")
                    % {"msg": exc.message, "path": exc.path or "top level"},
                )
                return data
            except json.JSONDecodeError as exc:
                self.add_error(
                    "config_json",
                    _("This is not valid JSON: %(msg)s at line %(line)s, column %(col)s.")
                    % {"msg": exc.msg, "line": exc.lineno, "col": exc.colno},
                )
                return data
            try:
                from_hf_config(config)
            except ArchitectureError as exc:
                details = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
                self.add_error(
                    "config_json",
                    _("This config.json cannot be planned: %(details)s.") % {"details": details},
                )
                return data
            data["hf_config"] = config
        elif not data.get("model"):
            self.add_error("model", _("Pick a model from the list."))
        return data

    def spec_part(self) -> dict[str, Any]:
        data = self.cleaned_data
        if data.get("source") == "paste":
            name = data.get("name") or "custom model"
            return {"model": {"hf_config": data["hf_config"], "name": name}}
        return {"model": data["model"]}


class PrecisionStepForm(forms.Form):
    weight_dtype = forms.ChoiceField(
        label=_("Weight precision"),
        choices=WEIGHT_DTYPE_CHOICES,
        widget=forms.RadioSelect,
        help_text=_("Lower precision frees memory for the KV cache; measure the accuracy cost."),
    )
    pre_quantized = forms.BooleanField(
        label=_("I will serve a pre-quantized checkpoint"),
        required=False,
        help_text=_("vLLM cannot quantize to INT8/INT4 on the fly."),
    )
    kv_cache_dtype = forms.ChoiceField(
        label=_("KV-cache precision"), choices=KV_DTYPE_CHOICES, widget=forms.RadioSelect
    )
    max_model_len = forms.IntegerField(
        label=_("Maximum context (tokens)"),
        help_text=_("Prompt plus answer of the longest request you will accept (max_model_len)."),
        error_messages={"invalid": _("Enter a whole number of tokens.")},
    )
    rope_scaling_factor = forms.ChoiceField(
        label=_("Extend the context with YaRN"),
        required=False,
        choices=[
            ("", _("No — the model's native context")),
            ("2", _("×2 (YaRN rope scaling)")),
            ("4", _("×4 (YaRN rope scaling)")),
            ("8", _("×8 (YaRN rope scaling)")),
        ],
        help_text=_(
            "Models such as Qwen2.5 ship 32K and reach 128K with YaRN; vLLM then needs the "
            "rope_scaling override, which the generated commands include."
        ),
    )
    vllm_version = forms.CharField(
        label=_("vLLM version"),
        required=False,
        max_length=32,
        widget=forms.TextInput(attrs={"placeholder": VLLM_VERSION}),
        help_text=format_lazy(
            _(
                "The release you will run; the KV cache is sized by its memory-profiling rules. "
                "Empty: {version}, the version the generated commands target."
            ),
            version=VLLM_VERSION,
        ),
    )
    gpu_memory_utilization = forms.FloatField(
        label=_("GPU memory vLLM may use (0–1)"),
        help_text=_("0.9 by default; lower it (e.g. 0.85) when anything else shares the GPU."),
        error_messages={"invalid": _("Enter a number between 0 and 1, e.g. 0.9.")},
    )

    def __init__(self, *args: Any, model_limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_limit = model_limit
        field = self.fields["max_model_len"]
        field.widget.attrs.update({"min": 16, "step": 1})
        if model_limit:
            field.widget.attrs["max"] = model_limit
            field.help_text = _(
                "Prompt plus answer of the longest request (max_model_len); this model "
                "supports up to %(limit)s tokens."
            ) % {"limit": model_limit}
        self.fields["gpu_memory_utilization"].widget.attrs.update(
            {"min": 0.05, "max": 1, "step": 0.01}
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        value = data.get("max_model_len")
        factor = float(data.get("rope_scaling_factor") or 1)
        limit = int((self.model_limit or 10_000_000) * factor)
        if value is not None and not 16 <= value <= limit:
            message = _("Enter a context between 16 and %(limit)s tokens (this model's limit).")
            if self.model_limit and factor == 1 and value <= self.model_limit * 8:
                message = _(
                    "Enter a context between 16 and %(limit)s tokens (this model's limit), or "
                    "extend the context with YaRN below."
                )
            self.add_error("max_model_len", message % {"limit": limit})
        return data

    def clean_vllm_version(self) -> str:
        value = (self.cleaned_data.get("vllm_version") or "").strip()
        if value:
            try:
                parse_version(value)
            except VersionError:
                raise forms.ValidationError(
                    _("Enter a vLLM release number such as %(example)s.")
                    % {"example": VLLM_VERSION}
                ) from None
        return value

    def clean_gpu_memory_utilization(self) -> float:
        value = self.cleaned_data["gpu_memory_utilization"]
        if not 0 < value <= 1:
            raise forms.ValidationError(
                _("Enter a fraction above 0 and at most 1, e.g. 0.9; you entered %(value)s.")
                % {"value": value}
            )
        return value

    def spec_part(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "weight_dtype": d["weight_dtype"],
            "pre_quantized": bool(d.get("pre_quantized")),
            "kv_cache_dtype": d["kv_cache_dtype"],
            "max_model_len": d["max_model_len"],
            "gpu_memory_utilization": d["gpu_memory_utilization"],
            **({"vllm_version": d["vllm_version"]} if d.get("vllm_version") else {}),
            **(
                {"rope_scaling_factor": float(d["rope_scaling_factor"])}
                if d.get("rope_scaling_factor")
                else {}
            ),
        }
