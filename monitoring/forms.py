"""Forms of the monitoring pages; saving goes through monitoring.services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from monitoring import services
from monitoring.models import PlanScope, Target


class TargetForm(forms.ModelForm):
    token = forms.CharField(
        label=_("Bearer token"),
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text=_("Optional. Stored encrypted and never shown again; leave empty to keep it."),
    )
    clear_token = forms.BooleanField(label=_("Remove the saved token"), required=False)

    class Meta:
        model = Target
        fields = [
            "name",
            "kind",
            "base_url",
            "selector",
            "machines",
            "plan",
            "pool_plan",
            "pool_model",
            "plan_scope",
            "decision",
            "poll_interval_s",
            "sample_limit",
            "enabled",
        ]
        widgets = {"machines": forms.SelectMultiple(attrs={"size": 6})}

    def __init__(self, *args: Any, has_token: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.has_token = has_token
        # Optional in the form: a target without a plan needs no scope (the model's default).
        self.fields["plan_scope"].required = False
        if not has_token:
            del self.fields["clear_token"]
        else:
            self.fields["token"].help_text = _(
                "A token is saved (not shown). Type a new one to replace it."
            )

    def save(self, commit: bool = True) -> Target:  # noqa: FBT001, FBT002 - Django's signature
        data = dict(self.cleaned_data)
        data["plan_scope"] = data.get("plan_scope") or PlanScope.REPLICA
        token = data.pop("token", "") or ""
        clear = data.pop("clear_token", False)
        machines = data.pop("machines", None)
        try:
            if self.instance.pk is None:
                self.instance = services.target_create(token=token, machines=machines or (), **data)
            else:
                changes = {k: v for k, v in data.items() if k in services.TARGET_FIELDS}
                self.instance = services.target_update(
                    target=self.instance,
                    token=token or None,
                    clear_token=clear,
                    machines=machines,
                    **changes,
                )
        except ValidationError as exc:
            apply_errors(self, exc)
            raise
        return self.instance


def apply_errors(form: forms.Form, exc: ValidationError) -> None:
    """Attach a service's ValidationError to the form's fields."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc)
