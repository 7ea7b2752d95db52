"""The wizard's draft: answers per step, kept in the session so Back and Next lose nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.http import HttpRequest, QueryDict

from planner.forms.wizard import (
    DEFAULT_MODEL,
    MEASURED_LINK_FIELDS,
    OPERATION_QUESTIONS,
    LoadStepForm,
    MachinesStepForm,
    ModelStepForm,
    OperationsStepForm,
    PrecisionStepForm,
    active_machines,
    model_default_dtype,
    model_limit,
)

SESSION_KEY = "planner_wizard"


@dataclass(frozen=True, slots=True)
class Step:
    slug: str
    number: int
    form_class: type[forms.Form]


STEPS: tuple[Step, ...] = (
    Step("model", 1, ModelStepForm),
    Step("precision", 2, PrecisionStepForm),
    Step("load", 3, LoadStepForm),
    Step("machines", 4, MachinesStepForm),
    Step("operations", 5, OperationsStepForm),
)
STEP_BY_SLUG = {s.slug: s for s in STEPS}

# Engine error paths -> (step, form field) so engine messages land next to the right field.
ENGINE_FIELD_MAP: tuple[tuple[str, str, str | None], ...] = (
    ("model.hf_config", "model", "config_json"),
    ("model", "model", "model"),
    ("weight_dtype", "precision", "weight_dtype"),
    ("pre_quantized", "precision", "pre_quantized"),
    ("kv_cache_dtype", "precision", "kv_cache_dtype"),
    ("max_model_len", "precision", "max_model_len"),
    ("rope_scaling_factor", "precision", "rope_scaling_factor"),
    ("gpu_memory_utilization", "precision", "gpu_memory_utilization"),
    ("workload.", "load", None),
    ("hardware.pool", "machines", "pool"),
    ("hardware.hostnames", "machines", "machines"),
    ("hardware.fleet", "machines", "source"),
    ("hardware", "machines", None),
    *((f"network.{name}", "machines", name) for name in MEASURED_LINK_FIELDS),
    ("pinned_layout.tp", "operations", "pinned_tp"),
    ("pinned_layout.pp", "operations", "pinned_pp"),
    ("pinned_layout", "operations", "pinned_replicas"),
    ("operations", "operations", None),
)


def locate_engine_error(path: str) -> tuple[str, str | None]:
    """Return (step slug, form field or None) for an engine error path."""
    for prefix, step, field_name in ENGINE_FIELD_MAP:
        if path.startswith(prefix):
            if field_name is None and prefix == "workload.":
                return step, path.split(".", 1)[1]
            return step, field_name
    return "operations", None


def raw_from_post(step: Step, post: QueryDict) -> dict[str, Any]:
    """Return the POSTed values of one step's fields (lists for multiple choices)."""
    form = step.form_class(**_form_kwargs(step, {}))
    raw: dict[str, Any] = {}
    for name, fld in form.fields.items():
        if isinstance(fld, forms.MultipleChoiceField):
            raw[name] = post.getlist(name)
        elif name in post:
            raw[name] = post.get(name)
    return raw


def _form_kwargs(step: Step, draft: dict[str, Any], **context: Any) -> dict[str, Any]:
    if step.slug == "precision":
        slug = _chosen_model(draft)
        return {"model_limit": context.get("model_limit", model_limit(slug) if slug else None)}
    if step.slug == "machines" and "machines" in context:
        return {"machines": context["machines"]}
    return {}


def _chosen_model(draft: dict[str, Any]) -> str:
    data = draft.get("model") or {}
    if data.get("source") == "paste":
        return ""
    return str(data.get("model") or DEFAULT_MODEL)


@dataclass
class Draft:
    """The answers so far, per step, in the shape a bound form expects."""

    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    machines: list[Any] | None = None

    @classmethod
    def load(cls, request: HttpRequest) -> Draft:
        stored = request.session.get(SESSION_KEY) or {}
        return cls(data=dict(stored.get("data") or {}))

    def save(self, request: HttpRequest) -> None:
        request.session[SESSION_KEY] = {"data": self.data}

    @staticmethod
    def clear(request: HttpRequest) -> None:
        request.session.pop(SESSION_KEY, None)

    def has(self, step: Step) -> bool:
        return step.slug in self.data

    def machine_rows(self) -> list[Any]:
        if self.machines is None:
            self.machines = active_machines()
        return self.machines

    def defaults(self, step: Step) -> dict[str, Any]:
        """Return the default answers of a step, from the catalog and the inventory."""
        if step.slug == "model":
            return {"source": "catalog", "model": DEFAULT_MODEL, "config_json": "", "name": ""}
        if step.slug == "precision":
            slug = _chosen_model(self.data)
            limit = model_limit(slug) if slug else None
            return {
                "weight_dtype": model_default_dtype(slug) if slug else "bf16",
                "kv_cache_dtype": "auto",
                "max_model_len": str(min(8192, limit or 8192)),
                "gpu_memory_utilization": "0.9",
            }
        if step.slug == "load":
            return {
                "concurrency": "16",
                "avg_input_tokens": "1024",
                "avg_output_tokens": "256",
                "traffic_shape": "steady",
                "arrival": "closed",
            }
        if step.slug == "machines":
            return {
                "source": "fleet" if self.machine_rows() else "hypothetical",
                "machines": [],
                "pool_kind": "",
                "node_count": "2",
                "gpus_per_node": "8",
                "gpu": "h100-sxm",
                "intra_link": "nvlink",
                "inter_node_gbps": "25",
                "inter_node_kind": "ethernet",
            }
        return {}

    def values(self, step: Step) -> dict[str, Any]:
        """Return the answers of a step, or its defaults when never answered."""
        return self.data.get(step.slug) or self.defaults(step)

    def form(self, step: Step, *, bound: bool | None = None) -> forms.Form:
        """Return the step's form, bound to its answers (or unbound with defaults)."""
        kwargs = _form_kwargs(step, self.data, machines=self.machine_rows())
        if bound is None:
            bound = self.has(step)
        if bound:
            return step.form_class(data=self.values(step), prefix=None, **kwargs)
        return step.form_class(initial=self.values(step), **kwargs)

    def update(self, step: Step, raw: dict[str, Any]) -> None:
        self.data[step.slug] = raw

    def spec(self) -> tuple[dict[str, Any], dict[str, forms.Form]]:
        """Return the spec from every step (defaults where unanswered) and the invalid forms."""
        spec: dict[str, Any] = {}
        invalid: dict[str, forms.Form] = {}
        for step in STEPS:
            form = self.form(step, bound=True)
            if form.is_valid():
                spec.update(form.spec_part())  # type: ignore[attr-defined]
            else:
                invalid[step.slug] = form
                fallback = step.form_class(
                    data=self.defaults(step),
                    **_form_kwargs(step, self.data, machines=self.machine_rows()),
                )
                if fallback.is_valid():
                    spec.update(fallback.spec_part())  # type: ignore[attr-defined]
        return spec, invalid


__all__ = ["OPERATION_QUESTIONS", "STEPS", "STEP_BY_SLUG", "Draft", "Step", "locate_engine_error"]
