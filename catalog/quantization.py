"""A checkpoint's quantization as its config.json declares it (`quantization_config`).

vLLM reads `quantization_config` and quantizes only the modules the checkpoint quantized:
embeddings, norms and routers always stay in the activation dtype, `lm_head` too unless the
method says otherwise, and every module on the checkpoint's ignore list (`ignore`,
`modules_to_not_convert`, `ignored_layers`, `llm_int8_skip_modules`, `exclude_modules`) stays
16-bit. Byte costs include the scales each format stores beside the packed weights.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Bytes per weight of each storage format, scales included.
FORMAT_BYTES: dict[str, float] = {
    "fp8": 1.0,  # per-tensor, per-channel or 128×128 block scales: < 0.1 % more
    "int8": 1.0,  # per-channel scales
    "mxfp4": 0.5 + 1 / 32,  # OCP MX: one 8-bit exponent per 32 weights
    "nvfp4": 0.5 + 1 / 16,  # one FP8 scale per 16 weights
    "nf4": 0.5 + 1 / 64 + 4 / (64 * 256),  # bitsandbytes: 8-bit absmax per 64, double-quantized
    "nf4_plain": 0.5 + 4 / 64,  # bitsandbytes without double quantization: fp32 absmax per 64
}

# Module kinds the memory model sizes separately; each maps to module names vLLM gives them.
MODULE_KINDS = ("attention", "mlp", "experts", "shared_experts")
_SAMPLE_NAMES: dict[str, tuple[str, ...]] = {
    "attention": ("self_attn.q_proj", "self_attn.o_proj", "self_attn.qkv_proj", "attn.qkv_proj"),
    "mlp": ("mlp.down_proj", "mlp.gate_up_proj", "mlp.gate_proj", "mlp.fc1", "mlp.fc2"),
    "experts": (
        "mlp.experts.0.down_proj",
        "mlp.experts.down_proj",
        "block_sparse_moe.experts.0.w1",
        "feed_forward.experts.down_proj",
    ),
    "shared_experts": (
        "mlp.shared_expert.down_proj",
        "mlp.shared_experts.down_proj",
        "feed_forward.shared_expert.down_proj",
    ),
}
_LAYER_PREFIXES = ("model.layers", "model.language_model.layers", "language_model.model.layers")


class QuantizationError(ValueError):
    """A quantization_config the planner cannot size; `field` names the offending key."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"quantization_config.{field}: {message}")
        self.field = f"quantization_config.{field}"


@dataclass(frozen=True, slots=True, kw_only=True)
class QuantScheme:
    """Which modules a pre-quantized checkpoint stores in which format, layer by layer."""

    method: str
    weight_dtype: str  # fp8 | int8 | int4 | mxfp4 | nvfp4 | nf4
    bytes_per_param: float
    # Layer indices whose modules of that kind stay 16-bit (the ignore list, resolved).
    kept_attention_layers: tuple[int, ...] = ()
    kept_mlp_layers: tuple[int, ...] = ()
    kept_expert_layers: tuple[int, ...] = ()
    kept_shared_expert_layers: tuple[int, ...] = ()
    lm_head_quantized: bool = False

    def kept_layers(self, kind: str) -> tuple[int, ...]:
        """Return the layers whose module `kind` (one of MODULE_KINDS) stays 16-bit."""
        return {
            "attention": self.kept_attention_layers,
            "mlp": self.kept_mlp_layers,
            "experts": self.kept_expert_layers,
            "shared_experts": self.kept_shared_expert_layers,
        }[kind]


def _whole(value: Any, field: str) -> int:
    """Return a non-negative integer setting, or raise QuantizationError naming it."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise QuantizationError(field, f"must be an integer, got {value!r:.40}")
    if not -1 <= value <= 1_000_000:
        raise QuantizationError(field, f"must be between -1 and 1,000,000, got {value!r:.40}")
    return int(value)


def _int_bytes(bits: int, group_size: int, *, zero_point: bool) -> float:
    """Return bytes per weight of a packed integer format with fp16 group scales."""
    per_weight = bits / 8
    if group_size and group_size > 0:
        per_weight += (2.0 + (bits / 8 if zero_point else 0.0)) / group_size
    return per_weight


# A literal ignore entry naming one layer ("model.layers.12.self_attn.q_proj") can only match
# that layer's modules: every sample name holds "layers.<index>." once.
_ONE_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


@dataclass(frozen=True, slots=True)
class _IgnoreList:
    """A checkpoint's ignore list as regexes, those that name one layer filed by its index.

    A 405B FP8 checkpoint lists 511 modules; trying each on every layer's module names cost
    0.3 s of CPU per config.json read, trying only the entries of the layer a few ms.
    """

    anywhere: tuple[re.Pattern[str], ...]
    by_layer: Mapping[int, tuple[re.Pattern[str], ...]]

    def __bool__(self) -> bool:
        return bool(self.anywhere or self.by_layer)

    def matches(self, names: Iterable[str], layer: int | None = None) -> bool:
        """Return whether an entry matches one of `names` (module names of `layer`, if given)."""
        patterns = self.anywhere
        if layer is not None:
            patterns += self.by_layer.get(layer, ())
        else:
            patterns += tuple(p for ps in self.by_layer.values() for p in ps)
        names = list(names)
        return any(p.search(n) for p in patterns for n in names)


def _patterns(entries: Iterable[Any]) -> _IgnoreList:
    """Turn ignore-list entries into regexes: 're:' regexes, globs, or module-name substrings."""
    anywhere: list[re.Pattern[str]] = []
    by_layer: dict[int, list[re.Pattern[str]]] = {}
    for raw in entries:
        entry = str(raw)
        if entry.startswith("re:"):
            anywhere.append(re.compile(entry[3:]))
            continue
        for prefix in ("model.language_model.", "language_model.model.", "language_model."):
            if entry.startswith(prefix):
                entry = "model." + entry[len(prefix) :]
        body = re.escape(entry).replace(r"\*", r"[^.]+")
        pattern = re.compile(body + r"(\.|$)")
        one = _ONE_LAYER.search(entry)
        if one is None:
            anywhere.append(pattern)
        else:
            by_layer.setdefault(int(one.group(1)), []).append(pattern)
    return _IgnoreList(
        anywhere=tuple(anywhere), by_layer={k: tuple(v) for k, v in by_layer.items()}
    )


def _kept_layers(patterns: _IgnoreList, kind: str, num_layers: int) -> tuple[int, ...]:
    if not patterns:
        return ()
    kept = []
    for i in range(num_layers):
        names = [f"{pre}.{i}.{leaf}" for pre in _LAYER_PREFIXES for leaf in _SAMPLE_NAMES[kind]]
        if patterns.matches(names, layer=i):
            kept.append(i)
    return tuple(kept)


def _compressed_tensors(qc: Mapping[str, Any]) -> tuple[str, float, bool]:
    groups = qc.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        raise QuantizationError("config_groups", "required for compressed-tensors")
    lm_head = False
    best: tuple[str, float] | None = None
    for name, group in groups.items():
        if not isinstance(group, Mapping):
            raise QuantizationError(f"config_groups.{name}", "must be an object")
        weights = group.get("weights")
        if not isinstance(weights, Mapping) or weights.get("num_bits") is None:
            raise QuantizationError(f"config_groups.{name}.weights.num_bits", "required")
        bits = _whole(weights["num_bits"], f"config_groups.{name}.weights.num_bits")
        kind = str(weights.get("type") or "int")
        targets = [str(t) for t in group.get("targets") or []]
        lm_head = lm_head or any("lm_head" in t for t in targets)
        if bits == 8:
            found = ("fp8", 1.0) if kind == "float" else ("int8", 1.0)
        elif bits == 4 and kind == "float":
            found = ("nvfp4", FORMAT_BYTES["nvfp4"])
        elif bits == 4:
            group_size = _whole(
                weights.get("group_size") or 0, f"config_groups.{name}.weights.group_size"
            )
            zero = not bool(weights.get("symmetric", True))
            found = ("int4", _int_bytes(4, group_size, zero_point=zero))
        else:
            raise QuantizationError(
                f"config_groups.{name}.weights.num_bits", f"unsupported value {bits}"
            )
        if best is None or found[1] > best[1]:
            best = found
    assert best is not None
    return best[0], best[1], lm_head


def _method_format(method: str, qc: Mapping[str, Any]) -> tuple[str, float, bool]:
    """Return (weight dtype, bytes per weight, lm_head quantized) for one quant_method."""
    if method in {"fp8", "fbgemm_fp8", "ptpc_fp8"}:
        return "fp8", 1.0, False
    if method == "modelopt":
        algo = str(qc.get("quant_algo") or qc.get("quantization", {}).get("quant_algo") or "")
        if algo.upper().startswith("NVFP4"):
            return "nvfp4", FORMAT_BYTES["nvfp4"], False
        return "fp8", 1.0, False
    if method == "mxfp4":
        return "mxfp4", FORMAT_BYTES["mxfp4"], False
    if method in {"awq", "awq_marlin", "gptq", "gptq_marlin"}:
        bits = qc.get("bits", qc.get("w_bit"))
        if bits is None:
            raise QuantizationError("bits", f"required for {method}")
        group = _whole(qc.get("group_size", qc.get("q_group_size", 128)) or 0, "group_size")
        zero = method.startswith("awq") or not bool(qc.get("sym", True))
        nbits = _whole(bits, "bits")
        dtype = {8: "int8", 4: "int4"}.get(nbits)
        if dtype is None:
            raise QuantizationError("bits", f"unsupported value {bits!r:.40}")
        return dtype, _int_bytes(nbits, group, zero_point=zero), bool(qc.get("lm_head"))
    if method == "bitsandbytes":
        if qc.get("load_in_8bit"):
            return "int8", 1.0, False
        double = bool(qc.get("bnb_4bit_use_double_quant", False))
        return "nf4", FORMAT_BYTES["nf4" if double else "nf4_plain"], False
    if method == "compressed-tensors":
        return _compressed_tensors(qc)
    raise QuantizationError("quant_method", f"unsupported value {method!r}")


_IGNORE_KEYS = (
    "ignore",
    "ignored_layers",
    "modules_to_not_convert",
    "llm_int8_skip_modules",
    "exclude_modules",
)


def parse_quantization(config: Mapping[str, Any], num_layers: int) -> QuantScheme | None:
    """Return the checkpoint's QuantScheme, None for a 16-bit checkpoint.

    Raises QuantizationError naming the field it cannot size.
    """
    qc = config.get("quantization_config")
    if qc is None:
        return None
    if not isinstance(qc, Mapping):
        raise QuantizationError("quant_method", "quantization_config must be an object")
    method = str(qc.get("quant_method") or "").lower()
    if not method:
        raise QuantizationError("quant_method", "required")
    dtype, per_param, lm_head = _method_format(method, qc)
    entries: list[Any] = []
    for key in _IGNORE_KEYS:
        value = qc.get(key)
        if isinstance(value, list | tuple):
            entries.extend(value)
    patterns = _patterns(entries)
    experts_only = method == "mxfp4"
    kept_attention = (
        tuple(range(num_layers))
        if experts_only
        else _kept_layers(patterns, "attention", num_layers)
    )
    return QuantScheme(
        method=method,
        weight_dtype=dtype,
        bytes_per_param=per_param,
        kept_attention_layers=kept_attention,
        kept_mlp_layers=_kept_layers(patterns, "mlp", num_layers),
        kept_expert_layers=_kept_layers(patterns, "experts", num_layers),
        kept_shared_expert_layers=_kept_layers(patterns, "shared_experts", num_layers),
        lm_head_quantized=lm_head and not patterns.matches(["lm_head"]),
    )


def coarse_dtype(scheme: QuantScheme | None) -> str | None:
    """Return the planner's weight dtype for a scheme ('nvfp4' and 'nf4' size as 4-bit)."""
    if scheme is None:
        return None
    return {"nvfp4": "int4", "nf4": "int4"}.get(scheme.weight_dtype, scheme.weight_dtype)
