"""The five steps of the planning wizard, one form each.

Each form validates its own fields with messages that name the allowed range; the engine then
checks the whole spec again (and its errors are shown next to the matching field).
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog import ArchitectureError, from_hf_config
from catalog.data import load_gpus, load_models
from core import json_input
from inventory.models import Machine, MachineStatus, ModelSpec, Pool
from planner.engine.profiling import VersionError, parse_version
from planner.engine.vllm_flags import VLLM_VERSION

DEFAULT_MODEL = "qwen2.5-32b"

WEIGHT_DTYPE_CHOICES = [
    ("bf16", _("BF16 — full precision (2 bytes per parameter)")),
    ("fp16", _("FP16 — full precision (2 bytes per parameter)")),
    ("fp8", _("FP8 — half the memory; needs Hopper/Ada GPUs or a pre-quantized checkpoint")),
    ("int8", _("INT8 — half the memory, pre-quantized checkpoint (e.g. GPTQ/W8A8)")),
    ("int4", _("INT4 — a quarter of the memory, pre-quantized checkpoint (AWQ/GPTQ)")),
    ("mxfp4", _("MXFP4 — about a quarter of the memory, MXFP4 checkpoints only (gpt-oss)")),
    ("fp32", _("FP32 — twice the memory of BF16 (4 bytes per parameter)")),
]
KV_DTYPE_CHOICES = [
    ("auto", _("auto — same as the model (16 bit)")),
    ("fp8", _("FP8 — twice the KV tokens, small accuracy cost")),
]
TRAFFIC_CHOICES = [
    ("steady", _("Steady — about the same load all day")),
    ("diurnal", _("Day/night — e.g. 500 QPS by day, 10 at night")),
    ("bursty", _("Bursty — sudden spikes")),
]
ARRIVAL_CHOICES = [
    ("closed", _("A fixed number in flight — each answer frees a slot for the next request")),
    ("poisson", _("At a rate — random (Poisson) arrivals, so bursts and lulls")),
    ("burst", _("All at once — a burst of requests, e.g. a batch job")),
]
INTRA_LINK_CHOICES = [
    ("nvlink", _("NVLink")),
    ("nvswitch", _("NVSwitch")),
    ("pcie", _("PCIe only")),
]
NIC_KIND_CHOICES = [
    ("ethernet", _("Ethernet (TCP)")),
    ("roce", _("RoCE")),
    ("infiniband", _("InfiniBand")),
]
SOURCE_CHOICES = [
    ("fleet", _("The whole active fleet — let the planner choose the machines")),
    ("pool", _("One pool")),
    ("machines", _("These machines")),
    ("hypothetical", _("Hypothetical machines (not in the inventory)")),
]
POOL_KIND_CHOICES = [
    ("", _("As recorded in the inventory")),
    ("dedicated", _("Dedicated — a platform already reserves these GPUs for us")),
    ("shared", _("Shared — other jobs use this pool; GPUs must be reserved as a group")),
]


def model_choices() -> list[tuple[str, Any]]:
    """Return inventory model specs, then catalog models not yet in the inventory."""
    rows = list(ModelSpec.objects.order_by("family", "name").values_list("slug", "name"))
    seen = {slug for slug, _name in rows}
    catalog = [(m.slug, m.name) for m in load_models().values() if m.slug not in seen]
    choices: list[tuple[str, Any]] = []
    if rows:
        choices.append((_("Inventory"), rows))
    if catalog:
        choices.append((_("Catalog"), sorted(catalog, key=lambda c: c[1])))
    return choices


def model_limit(slug: str) -> int | None:
    """Return the model's max_position_embeddings (inventory first, then catalog)."""
    row = ModelSpec.objects.filter(slug=slug).values_list("max_position_embeddings", flat=True)
    if row:
        return int(row[0])
    entry = load_models().get(slug)
    return entry.architecture.max_position_embeddings if entry else None


def model_default_dtype(slug: str) -> str:
    row = ModelSpec.objects.filter(slug=slug).first()
    if row is not None:
        return row.checkpoint_quantization or row.default_dtype
    entry = load_models().get(slug)
    if entry is None:
        return "bf16"
    return entry.architecture.checkpoint_quantization or entry.architecture.default_dtype


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


def _positive_int(label: Any, lo: int, hi: int, **kwargs: Any) -> forms.IntegerField:
    message = _("Enter a whole number between %(lo)s and %(hi)s.") % {"lo": lo, "hi": hi}
    return forms.IntegerField(
        label=label,
        min_value=lo,
        max_value=hi,
        error_messages={"invalid": message, "min_value": message, "max_value": message},
        **kwargs,
    )


def _optional_positive(label: Any, help_text: Any) -> forms.FloatField:
    message = _("Leave empty, or enter a number above 0.")
    return forms.FloatField(
        label=label,
        required=False,
        min_value=0.001,
        help_text=help_text,
        error_messages={"invalid": message, "min_value": message},
    )


def _optional_bounded(
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
    concurrency = _positive_int(
        _("Concurrent sequences at peak"),
        1,
        1_000_000,
        help_text=_("How many requests are generating at the same time at the busiest hour."),
    )
    avg_input_tokens = _positive_int(
        _("Typical prompt length (tokens)"), 1, 10_000_000, help_text=_("Input tokens per request.")
    )
    avg_output_tokens = _positive_int(
        _("Typical answer length (tokens)"),
        1,
        10_000_000,
        help_text=_("Output tokens per request."),
    )
    traffic_shape = forms.ChoiceField(
        label=_("Traffic over the day"), choices=TRAFFIC_CHOICES, widget=forms.RadioSelect
    )
    peak_qps = _optional_positive(_("Peak requests per second (optional)"), "")
    ttft_slo_ms = _optional_positive(
        _("Time-to-first-token target, ms (optional)"),
        _("The planner flags layouts that miss it."),
    )
    itl_slo_ms = _optional_positive(
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
    request_rate_per_s = _optional_positive(
        _("Requests per second (Poisson arrivals)"),
        _("Required when requests arrive at a rate."),
    )
    burst_size = _optional_bounded(
        forms.IntegerField,
        _("Requests in the burst"),
        (1, 100_000),
        _("Required when requests arrive in one burst."),
        _("Leave empty, or enter a whole number from 1 to 100000."),
    )
    input_tokens_sd = _optional_positive(
        _("Prompt length spread, ± tokens (optional)"), _("Standard deviation; empty: fixed.")
    )
    output_tokens_sd = _optional_positive(
        _("Answer length spread, ± tokens (optional)"), _("Standard deviation; empty: fixed.")
    )
    shared_prefix_fraction = _optional_bounded(
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


class MachinesStepForm(forms.Form):
    source = forms.ChoiceField(
        label=_("Which machines may this deployment use?"),
        choices=SOURCE_CHOICES,
        widget=forms.RadioSelect,
    )
    pool = forms.ModelChoiceField(
        label=_("Pool"),
        queryset=Pool.objects.order_by("name"),
        required=False,
        to_field_name="name",
    )
    machines = forms.MultipleChoiceField(
        label=_("Machines"), required=False, widget=forms.CheckboxSelectMultiple
    )
    pool_kind = forms.ChoiceField(
        label=_("Are these GPUs dedicated or shared?"),
        choices=POOL_KIND_CHOICES,
        required=False,
        widget=forms.RadioSelect,
        help_text=_("A shared pool needs the whole GPU group reserved at once."),
    )
    node_count = _positive_int(_("Number of machines"), 1, 10_000, required=False)
    gpus_per_node = _positive_int(_("GPUs per machine"), 1, 64, required=False)
    gpu = forms.ChoiceField(label=_("GPU"), required=False)
    intra_link = forms.ChoiceField(
        label=_("Link between GPUs inside a machine"), choices=INTRA_LINK_CHOICES, required=False
    )
    inter_node_gbps = forms.FloatField(
        label=_("Network between machines (Gb/s)"),
        required=False,
        min_value=0.1,
        help_text=_("25 for 25 GbE, 400 for 400 Gb InfiniBand."),
        error_messages={"min_value": _("Enter a speed above 0 Gb/s.")},
    )
    inter_node_kind = forms.ChoiceField(
        label=_("Network kind"), choices=NIC_KIND_CHOICES, required=False
    )

    def __init__(self, *args: Any, machines: list[Machine] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.machine_rows = machines if machines is not None else active_machines()
        self.fields["machines"].choices = [(m.hostname, m.hostname) for m in self.machine_rows]
        self.fields["gpu"].choices = [
            (g.slug, f"{g.name} ({g.memory_gib:g} GiB)") for g in load_gpus().values()
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        source = data.get("source")
        if source == "fleet" and data.get("machines"):
            # Ticking machines selects them: the ticks are the answer, not the fleet default.
            source = data["source"] = "machines"
        if source == "pool" and not data.get("pool"):
            self.add_error("pool", _("Pick a pool."))
        if source == "machines" and not data.get("machines"):
            self.add_error("machines", _("Tick at least one machine."))
        if source == "fleet" and not self.machine_rows:
            self.add_error("source", _("The inventory has no active machine yet."))
        if source == "hypothetical":
            for key, message in (
                ("node_count", _("Enter the number of machines (1 to 10000).")),
                ("gpus_per_node", _("Enter the GPUs per machine: at least 1, at most 64.")),
                ("gpu", _("Pick a GPU.")),
                ("inter_node_gbps", _("Enter the network speed between machines in Gb/s.")),
            ):
                if not data.get(key) and key not in self.errors:
                    self.add_error(key, message)
        return data

    def spec_part(self) -> dict[str, Any]:
        d = self.cleaned_data
        source = d["source"]
        hardware: dict[str, Any]
        if source == "hypothetical":
            hardware = {
                "node_count": d["node_count"],
                "gpus_per_node": d["gpus_per_node"],
                "gpu": d["gpu"],
                "intra_link": d.get("intra_link") or "nvlink",
                "inter_node_gbps": d["inter_node_gbps"],
                "inter_node_kind": d.get("inter_node_kind") or "ethernet",
            }
        elif source == "pool":
            hardware = {"pool": d["pool"].name}
        elif source == "machines":
            hardware = {"hostnames": list(d["machines"])}
        else:
            hardware = {"fleet": True}
        if d.get("pool_kind"):
            hardware["pool_kind"] = d["pool_kind"]
        return {"hardware": hardware}


def active_machines() -> list[Machine]:
    """Return the active machines with GPU type, pool and NICs (three queries)."""
    from inventory.selectors import machine_list

    return list(machine_list(status=MachineStatus.ACTIVE).order_by("hostname"))


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
    pinned_tp = _positive_int(_("Also evaluate TP (optional)"), 1, 1024, required=False)
    pinned_pp = _positive_int(_("× PP"), 1, 64, required=False)
    pinned_replicas = _positive_int(_("× replicas"), 1, 100_000, required=False)

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
