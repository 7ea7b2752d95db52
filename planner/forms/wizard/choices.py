"""The wizard's choices and the catalog lookups its steps share (default model, limits)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from catalog.data import load_models
from inventory.models import ModelSpec

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
