"""The vision tower of a multimodal wrapper, counted into the weights, and the text config it
wraps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.architecture import ArchitectureError
from catalog.hf_config.families import WRAPPERS, Family
from catalog.hf_config.reader import ConfigReader

_VISION_KEYS = (
    "embed_dim",
    "hidden_size",
    "num_hidden_layers",
    "depth",
    "num_layers",
    "intermediate_size",
    "num_global_layers",
    "patch_size",
    "temporal_patch_size",
    "projector_input_dim",
    "vision_output_dim",
)


def _vision_params(vc: Mapping[str, Any], wrapper: str, text_hidden: int) -> tuple[int, int]:
    """Return (vision tower + projector parameters, LM tokens of one image)."""
    h = int(vc.get("embed_dim") or vc.get("hidden_size") or 0)
    layers = int(vc.get("num_hidden_layers") or vc.get("depth") or vc.get("num_layers") or 0)
    if h <= 0 or layers <= 0:
        return 0, 0
    inter = int(vc.get("intermediate_size") or float(vc.get("mlp_ratio") or 4) * h)
    gated = wrapper in {"mistral3", "qwen2_5_vl"}
    per_layer = 4 * h * h + 4 * h + (3 if gated else 2) * h * inter + inter + 5 * h
    layers += int(vc.get("num_global_layers") or 0)  # mllama's global encoder
    patch = int(vc.get("patch_size") or 14)
    temporal = int(vc.get("temporal_patch_size") or 1)
    image_raw = vc.get("image_size") or 0
    image = int(image_raw[0] if isinstance(image_raw, list | tuple) else image_raw)
    grid = (image // patch) ** 2 if image else 0
    params = layers * per_layer + 3 * patch * patch * temporal * h + grid * h
    merge = vc.get("spatial_merge_size") or vc.get("merge_kernel_size") or 1
    merge_area = merge[0] * merge[1] if isinstance(merge, list | tuple) else int(merge) ** 2
    if wrapper == "llama4":
        shuffle_dim = int(vc.get("projector_input_dim") or 4 * h)
        out_dim = int(vc.get("vision_output_dim") or shuffle_dim)
        params += 4 * h * shuffle_dim + shuffle_dim * out_dim + out_dim * text_hidden
        merge_area = 4
    elif wrapper == "gemma3":
        params += h * text_hidden
    elif wrapper == "mllama":
        params += int(vc.get("vision_output_dim") or 5 * h) * text_hidden
    else:
        inner = h * merge_area
        params += inner * inner + inner * text_hidden if merge_area > 1 else h * text_hidden
        params += text_hidden * text_hidden if merge_area == 1 else 0
    tokens = grid // merge_area if grid else 0
    return params, tokens


def text_config(config: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, str, str]:
    """Return (text config, its model_type, wrapper model_type or '', error key prefix)."""
    outer = str(config.get("model_type") or "").lower()
    text = config.get("text_config")
    if outer in WRAPPERS or isinstance(text, Mapping):
        if isinstance(text, Mapping):
            inner = str(text.get("model_type") or WRAPPERS.get(outer, "")).lower()
            if outer == "mllama":
                inner = "mllama_text"
            merged = {k: v for k, v in config.items() if k not in {"text_config", "model_type"}}
            merged.update(text)
            return merged, inner, outer, "text_config."
        if outer in {"qwen2_vl", "qwen2_5_vl"}:
            return config, WRAPPERS[outer], outer, ""
        raise ArchitectureError(
            f"config.json for {outer} is missing required keys: text_config",
            missing=["text_config"],
            errors={"text_config": "required"},
        )
    return config, outer, "", ""


def vision_tower(
    config: Mapping[str, Any], cfg: ConfigReader, wrapper: str, hidden: int
) -> tuple[int, int]:
    """Return (vision encoder parameters, tokens per image) of a multimodal wrapper, else 0s."""
    vision, mm_tokens = 0, 0
    vc = config.get("vision_config")
    if not (wrapper and isinstance(vc, Mapping)):
        return vision, mm_tokens
    vision_cfg = ConfigReader(vc, Family(), "vision_config.")
    for key in _VISION_KEYS:
        vision_cfg.int(key)
    mm_cfg = ConfigReader(config, Family(), "")
    per_image = mm_cfg.int("mm_tokens_per_image")
    cfg.errors.update(vision_cfg.errors | mm_cfg.errors)
    if not cfg.errors:
        try:
            vision, mm_tokens = _vision_params(vc, wrapper, hidden)
        except (TypeError, ValueError, IndexError):
            cfg.errors["vision_config"] = "holds a size that is not a number"
        mm_tokens = per_image or mm_tokens
    return vision, mm_tokens
