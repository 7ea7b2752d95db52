"""Reading the model of a spec: a catalog slug, a Hugging Face config or an inline architecture,
and its weight precision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog import identifiers
from catalog.architecture import Architecture, ArchitectureError
from catalog.architecture_json import config_only_values
from catalog.data import load_models
from catalog.hf_config import from_hf_config
from catalog.quantization import parse_quantization
from planner.engine.spec.reader import Reader
from planner.engine.spec.values import CHECKPOINT_ONLY_DTYPES, WEIGHT_DTYPES


def read_model(r: Reader, d: Mapping[str, Any]) -> tuple[str, str, str, Architecture | None]:
    raw = d.get("model")
    if isinstance(raw, str):
        raw = {"slug": raw}
    if not isinstance(raw, Mapping):
        r.errors["model"] = "required: a catalog slug, {'slug': ...} or {'hf_config': {...}}"
        return "", "", "", None
    inline = raw.get("architecture")
    if isinstance(inline, Mapping) and "num_hidden_layers" in inline:
        # A config.json under "architecture" (accepted for compatibility).
        raw = {**raw, "hf_config": inline}
    if "architecture" in raw and "hf_config" not in raw:
        arch = _inline_architecture(r, raw.get("architecture"))
        if arch is None:
            return "", "", "", None
        return _named_model(r, raw, arch)
    if "hf_config" in raw:
        cfg: Any = raw.get("hf_config") or {}
        try:
            arch = from_hf_config(cfg)
        except ArchitectureError as exc:
            for key, msg in exc.errors.items():
                r.errors[f"model.hf_config.{key}"] = msg
            return "", "", "", None
        return _named_model(r, raw, arch)
    slug = str(raw.get("slug", ""))
    entry = load_models().get(slug)
    if entry is None:
        r.errors["model.slug"] = (
            f"unknown model slug {slug!r}; known: {', '.join(sorted(load_models()))}"
        )
        return "", "", "", None
    return entry.name, entry.hf_repo, slug, entry.architecture


def _named_model(
    r: Reader, raw: Mapping[str, Any], arch: Architecture
) -> tuple[str, str, str, Architecture | None]:
    """Return (name, repository, slug, arch) of an inline model; the repository reaches scripts.

    An explicit `hf_repo` must be a Hugging Face repository id or an absolute path. Without one,
    the name serves when it is a repository id, else the weights are expected under /models/.
    """
    name = str(raw.get("name") or raw.get("hf_repo") or "custom model")
    repo = str(raw.get("hf_repo") or "")
    if repo == raw.get("name") and not identifiers.is_model_ref(repo):
        repo = ""  # older wizards copied the display name here
    if repo and not identifiers.is_model_ref(repo):
        r.errors["model.hf_repo"] = (
            f"{repo!r} must be a Hugging Face repository id (owner/name: letters, digits, '.', "
            "'_', '-') or an absolute path such as /models/my-model"
        )
    if not repo:
        repo = name if identifiers.is_model_ref(name) else f"/models/{identifiers.to_name(name)}"
    slug = str(raw.get("slug") or "")
    if slug and not identifiers.is_name(slug):
        r.errors["model.slug"] = (
            f"{slug!r} must be 1-100 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit"
        )
    return name, repo, slug, arch


_ARCH_REQUIRED = (
    "hidden_size",
    "num_layers",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
)
_ARCH_INTS = (
    *_ARCH_REQUIRED,
    "num_experts",
    "experts_per_token",
    "moe_intermediate_size",
    "num_shared_experts",
    "num_dense_layers",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "num_mtp_layers",
)
# The quantization_config a checkpoint of each `checkpoint_quantization` declares, for an
# inline architecture (no config.json): the checkpoint's modules are sized as vLLM loads them.
_DECLARED_QUANTIZATION: dict[str, dict[str, Any]] = {
    "fp8": {"quant_method": "fp8"},
    "mxfp4": {"quant_method": "mxfp4"},
    "int8": {"quant_method": "gptq", "bits": 8},
    "int4": {"quant_method": "gptq", "bits": 4},
}


def _inline_architecture(r: Reader, raw: Any) -> Architecture | None:
    """Return an Architecture from its own field names (catalog.Architecture), or None."""
    if not isinstance(raw, Mapping):
        r.errors["model.architecture"] = "must be an object with the Architecture fields"
        return None
    values: dict[str, Any] = {}
    for key in _ARCH_INTS:
        if key not in raw:
            if key in _ARCH_REQUIRED:
                r.errors[f"model.architecture.{key}"] = "required, a positive integer"
            continue
        value = r.integer(raw, key, f"model.architecture.{key}", 0, 10**9, None)
        if value is not None:
            values[key] = value
    for key in _ARCH_REQUIRED:
        if values.get(key) == 0:
            r.errors[f"model.architecture.{key}"] = "must be a positive integer"
    if any(k.startswith("model.architecture") for k in r.errors):
        return None
    if values["num_attention_heads"] % values["num_kv_heads"]:
        r.errors["model.architecture.num_kv_heads"] = (
            f"must divide num_attention_heads ({values['num_attention_heads']})"
        )
        return None
    # The fields beyond the inventory's columns (attention windows, vision tower, per-module
    # quantization...): an Architecture sent whole (catalog.architecture_json) arrives whole.
    extra = config_only_values(raw, values["num_layers"], "model.architecture", r.errors)
    if any(k.startswith("model.architecture") for k in r.errors):
        return None
    quant = raw.get("checkpoint_quantization")
    quant = quant if quant in _DECLARED_QUANTIZATION else None
    stated_scheme = extra.pop("quantization", None)
    return Architecture(
        model_type=str(raw.get("model_type") or "inline"),
        tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
        attention_bias=bool(raw.get("attention_bias", False)),
        qk_norm=bool(raw.get("qk_norm", False)),
        router_bias=bool(raw.get("router_bias", False)),
        default_dtype=str(raw.get("default_dtype") or "bf16"),
        checkpoint_quantization=quant,
        quantization=stated_scheme
        or (
            parse_quantization(
                {"quantization_config": _DECLARED_QUANTIZATION[quant]}, values["num_layers"]
            )
            if quant
            else None
        ),
        **values,
        **extra,
    )


def read_weights(r: Reader, d: Mapping[str, Any], arch: Architecture | None) -> tuple[str, bool]:
    """Return the weight dtype (the checkpoint's own by default) and whether it is stored so."""
    default_dtype = "bf16"
    if arch is not None:
        default_dtype = arch.checkpoint_quantization or arch.default_dtype
    weight_dtype = r.choice(d, "weight_dtype", "weight_dtype", WEIGHT_DTYPES, default_dtype)
    pre_quantized = r.boolean(
        d,
        "pre_quantized",
        "pre_quantized",
        bool(arch and arch.checkpoint_quantization == weight_dtype),
    )
    if (
        weight_dtype in CHECKPOINT_ONLY_DTYPES
        and arch is not None
        and arch.checkpoint_quantization != weight_dtype
    ):
        r.errors["weight_dtype"] = (
            f"{weight_dtype} needs a checkpoint stored in {weight_dtype} "
            f"(config.json quantization_config.quant_method {weight_dtype!r}); vLLM does not "
            "quantize to it at load time"
        )
    return weight_dtype, pre_quantized
