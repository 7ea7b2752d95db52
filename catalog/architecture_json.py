"""An Architecture as plain JSON values and back: the inline `model.architecture` of a plan spec.

Every field of catalog.Architecture travels, the per-layer attention windows, MLP shape, vision
tower and per-module quantization included, so a model the inventory already holds as an
Architecture reaches the engine as it is, with no config.json made up and parsed back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from catalog.architecture import CONFIG_ONLY_FIELDS, Architecture
from catalog.quantization import QuantScheme

_INTS = {
    # field: (least, most)
    "mlp_matrices": (2, 3),
    "norms_per_layer": (0, 8),
    "position_embeddings": (0, 10**8),
    "shared_expert_intermediate_size": (0, 10**7),
    "moe_layer_step": (1, 1024),
    "rotary_cache_positions": (0, 10**8),
    "vision_params": (0, 10**12),
    "mm_tokens_per_item": (0, 10**7),
}
_BOOLS = ("mlp_bias", "expert_bias", "vision_replicated")
WINDOW_KINDS = ("sliding", "chunked")
QUANTIZED_DTYPES = ("fp8", "int8", "int4", "mxfp4", "nvfp4", "nf4")
_KEPT = (
    "kept_attention_layers",
    "kept_mlp_layers",
    "kept_expert_layers",
    "kept_shared_expert_layers",
)


def architecture_to_json(arch: Architecture) -> dict[str, Any]:
    """Return every field of `arch` as JSON values (tuples as lists, quantization as an object)."""
    out: dict[str, Any] = {}
    for f in fields(Architecture):
        value = getattr(arch, f.name)
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, QuantScheme):
            value = {
                q.name: list(getattr(value, q.name))
                if isinstance(getattr(value, q.name), tuple)
                else getattr(value, q.name)
                for q in fields(QuantScheme)
            }
        out[f.name] = value
    return out


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _layers(value: Any, num_layers: int) -> bool:
    return isinstance(value, list) and all(_whole(v) and 0 <= v < num_layers for v in value)


def _quantization(
    raw: Any, num_layers: int, path: str, errors: dict[str, str]
) -> QuantScheme | None:
    if not isinstance(raw, Mapping):
        errors[path] = "must be an object {method, weight_dtype, bytes_per_param, ...}"
        return None
    method, dtype, size = raw.get("method"), raw.get("weight_dtype"), raw.get("bytes_per_param")
    if not isinstance(method, str) or not method:
        errors[f"{path}.method"] = "required, the checkpoint's quant_method"
    if dtype not in QUANTIZED_DTYPES:
        errors[f"{path}.weight_dtype"] = f"must be one of {', '.join(QUANTIZED_DTYPES)}"
    if isinstance(size, bool) or not isinstance(size, int | float) or not 0 < size <= 4:
        errors[f"{path}.bytes_per_param"] = "must be a number in (0, 4]"
    for name in _KEPT:
        if not _layers(raw.get(name, []), num_layers):
            errors[f"{path}.{name}"] = f"must be a list of layer indices below {num_layers}"
    if not isinstance(raw.get("lm_head_quantized", False), bool):
        errors[f"{path}.lm_head_quantized"] = "must be true or false"
    if any(k.startswith(path) for k in errors):
        return None
    return QuantScheme(
        method=str(method),
        weight_dtype=str(dtype),
        bytes_per_param=float(raw["bytes_per_param"]),
        lm_head_quantized=bool(raw.get("lm_head_quantized", False)),
        **{name: tuple(raw.get(name, [])) for name in _KEPT},
    )


def config_only_values(
    raw: Mapping[str, Any], num_layers: int, path: str, errors: dict[str, str]
) -> dict[str, Any]:
    """Return the Architecture fields beyond the inventory's columns that `raw` states, checked.

    Each bad value is put in `errors` under `path.<field>`; fields not stated keep the
    Architecture's defaults.
    """
    out: dict[str, Any] = {}
    for name, (least, most) in _INTS.items():
        if name in raw:
            value = raw[name]
            if _whole(value) and least <= value <= most:
                out[name] = value
            else:
                errors[f"{path}.{name}"] = f"must be an integer from {least} to {most:,}"
    for name in _BOOLS:
        if name in raw:
            if isinstance(raw[name], bool):
                out[name] = raw[name]
            else:
                errors[f"{path}.{name}"] = "must be true or false"
    if "window_kind" in raw:
        if raw["window_kind"] in WINDOW_KINDS:
            out["window_kind"] = raw["window_kind"]
        else:
            errors[f"{path}.window_kind"] = f"must be one of {', '.join(WINDOW_KINDS)}"
    windows = raw.get("layer_windows", [])
    if windows:
        valid = isinstance(windows, list) and all(_whole(w) and w >= -1 for w in windows)
        if valid and len(windows) == num_layers:
            out["layer_windows"] = tuple(windows)
        else:
            errors[f"{path}.layer_windows"] = (
                f"must list {num_layers} attention windows, one per layer (0: full attention, "
                "n: a window of n tokens, -1: cross-attention only)"
            )
    if raw.get("quantization") is not None:
        out["quantization"] = _quantization(
            raw["quantization"], num_layers, f"{path}.quantization", errors
        )
    assert set(out) <= CONFIG_ONLY_FIELDS
    return out
