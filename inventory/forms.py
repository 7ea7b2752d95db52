"""Forms of the inventory pages; saving goes through inventory.services."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.forms import inlineformset_factory
from django.utils.translation import gettext_lazy as _

from inventory.architecture import ARCHITECTURE_FIELDS
from inventory.models import (
    MACHINE_FIELDS,
    GpuType,
    ImportFormat,
    Machine,
    ModelSpec,
    NetworkInterface,
    Pool,
)
from inventory.services import architecture_from_config, model_slugify, parse_config_json
from inventory.validators import validate_model_slug


def apply_validation_error(form: forms.BaseForm, error: ValidationError) -> None:
    """Put a service's ValidationError on the form: on its field when the form has one."""
    if not hasattr(error, "error_dict"):
        form.add_error(None, error)
        return
    for field, errors in error.error_dict.items():
        target = field if field in form.fields else None
        for item in errors:
            message = item if target else ValidationError(f"{field}: {item.messages[0]}")
            form.add_error(target, message)


class GpuTypeForm(forms.ModelForm):
    class Meta:
        model = GpuType
        fields = [
            "slug",
            "name",
            "vendor",
            "memory_gib",
            "driver_visible_gib",
            "hbm_bandwidth_gbs",
            "bf16_dense_tflops",
            "fp8_support",
            "nvlink_bandwidth_gbs",
            "form_factor",
            "source",
        ]


class PoolForm(forms.ModelForm):
    class Meta:
        model = Pool
        fields = ["name", "kind", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}


class MachineForm(forms.ModelForm):
    class Meta:
        model = Machine
        fields = MACHINE_FIELDS
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}

    def clean_hostname(self) -> str:
        return (self.cleaned_data.get("hostname") or "").strip().lower()


NIC_FIELDS = ["name", "speed_gbps", "kind", "role"]


class NetworkInterfaceForm(forms.ModelForm):
    class Meta:
        model = NetworkInterface
        fields = NIC_FIELDS


NicFormSet = inlineformset_factory(
    Machine,
    NetworkInterface,
    form=NetworkInterfaceForm,
    fields=NIC_FIELDS,
    extra=2,
    can_delete=True,
)


MODEL_SPEC_FIELDS = [
    "slug",
    "name",
    "family",
    "hf_repo",
    "source",
    *[name for name in ARCHITECTURE_FIELDS],
    "published_total_params",
    "notes",
]


class ModelSpecForm(forms.ModelForm):
    class Meta:
        model = ModelSpec
        fields = MODEL_SPEC_FIELDS
        widgets = {"notes": forms.Textarea(attrs={"rows": 3})}


class ModelSpecImportForm(forms.Form):
    """Paste or upload a Hugging Face config.json."""

    name = forms.CharField(label=_("Name"), max_length=150)
    slug = forms.CharField(
        label=_("Slug"),
        max_length=100,
        required=False,
        validators=[validate_model_slug],
        help_text=_("Derived from the name when left empty."),
    )
    family = forms.CharField(label=_("Family"), max_length=60, required=False)
    hf_repo = forms.CharField(
        label=_("Hugging Face repository"),
        max_length=200,
        required=False,
        help_text=_("e.g. Qwen/Qwen3-8B (for the record; nothing is downloaded)."),
    )
    config_text = forms.CharField(
        label=_("config.json (paste)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
    )
    config_file = forms.FileField(label=_("or upload config.json"), required=False)

    MAX_BYTES = 2 * 1024 * 1024

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        text, upload = data.get("config_text"), data.get("config_file")
        if not text and not upload:
            raise ValidationError(
                {"config_text": _("Paste a config.json or upload one (exactly one of the two).")}
            )
        field = "config_file" if upload else "config_text"
        if upload:
            if upload.size > self.MAX_BYTES:
                self.add_error(field, _("config.json must be at most 2 MiB."))
                return data
            raw: str | bytes = upload.read()
        else:
            raw = text
        try:
            config = parse_config_json(raw)
            data["architecture"] = architecture_from_config(config)
        except ValidationError as exc:
            for message in exc.message_dict.get("config", exc.messages):
                self.add_error(field, message)
            return data
        data["config"] = config
        slug = data.get("slug") or model_slugify(data.get("name") or "")
        data["slug"] = slug
        if slug and ModelSpec.objects.filter(slug=slug).exists():
            self.add_error("slug", _("A model spec with this slug already exists."))
        return data


class MachineImportForm(forms.Form):
    """Upload a CSV or YAML list of machines with their NICs."""

    file = forms.FileField(label=_("File (CSV or YAML)"))
    file_format = forms.ChoiceField(
        label=_("Format"),
        choices=[("", _("from the file name")), *ImportFormat.choices],
        required=False,
    )
    update_existing = forms.BooleanField(
        label=_("Update machines that already exist (matched by hostname)"), required=False
    )

    MAX_BYTES = 5 * 1024 * 1024

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("file")
        if upload is None:
            return data
        if upload.size > self.MAX_BYTES:
            self.add_error("file", _("The file must be at most 5 MiB."))
            return data
        fmt = data.get("file_format")
        if not fmt:
            name = upload.name.lower()
            if name.endswith(".csv"):
                fmt = ImportFormat.CSV
            elif name.endswith((".yaml", ".yml")):
                fmt = ImportFormat.YAML
            else:
                self.add_error(
                    "file_format",
                    _("Choose the format: the file name ends neither in .csv nor .yaml/.yml."),
                )
                return data
        data["file_format"] = fmt
        return data
