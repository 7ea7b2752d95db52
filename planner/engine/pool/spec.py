"""The spec of a pool plan: two or more models, each with its usual fields, on one hardware."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.engine.spec import Hardware, PlanSpec, SpecError, spec_from_dict

MAX_POOL_MODELS = 16
PRIORITY_RANGE = (1, 10)
DEFAULT_PRIORITY = 5
# A model's name becomes a route, a unit and a file name in the bundles: a DNS-label-like word.
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
# The fields that belong to the pool, not to one model.
_SHARED_KEYS = ("hardware", "operations", "network", "vllm_version", "step_backend")
# The fields of the pool itself, which no model's spec has.
_POOL_KEYS = ("share_gpus",)


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolModel:
    """One model of the pool: its single-model spec (on the pool's hardware) and its weight."""

    name: str
    spec: PlanSpec
    priority: int = DEFAULT_PRIORITY  # 1 (low) .. 10 (high): who keeps GPUs when they run short


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolSpec:
    models: tuple[PoolModel, ...]
    # May two small models' instances share one GPU, each with half the memory share? Off by
    # default: a shared GPU's time is split too, which the plan predicts (options.py).
    share_gpus: bool = False

    @property
    def hardware(self) -> Hardware:
        """Return the pool's machines (every model's spec holds the same)."""
        return self.models[0].spec.hardware

    def without(self, name: str) -> PoolSpec:
        """Return the pool without the model called `name` (what-if: remove a model)."""
        kept = tuple(m for m in self.models if m.name != name)
        return PoolSpec(models=kept, share_gpus=self.share_gpus)


def is_pool_spec(d: Any) -> bool:
    """Return whether a JSON spec asks for a pool (it has a `models` list)."""
    return isinstance(d, Mapping) and "models" in d


def name_from(text: str, *, length: int = 40) -> str:
    """Return a pool name made of `text` (a repository or slug): its last part, lower-case,
    dashes for anything else, at most `length` characters; "" when nothing is left."""
    slug = re.sub(r"[^a-z0-9-]+", "-", text.rsplit("/", 1)[-1].lower()).strip("-")
    return slug[:length].rstrip("-")


def _default_name(raw: Mapping[str, Any], index: int) -> str:
    """Return the name of a model given none: its repository's or catalog slug's last part."""
    model = raw.get("model")
    if isinstance(model, Mapping):  # resolved from the inventory or given inline
        model = model.get("hf_repo") or model.get("slug")
    text = model if isinstance(model, str) and model else f"model-{index + 1}"
    return name_from(text) or f"model-{index + 1}"


def _priority(raw: Mapping[str, Any], path: str, errors: dict[str, str]) -> int:
    value = raw.get("priority", DEFAULT_PRIORITY)
    lo, hi = PRIORITY_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        errors[path] = f"must be an integer between {lo} and {hi}"
        return DEFAULT_PRIORITY
    return value


def _model(d: Mapping[str, Any], raw: Any, index: int, errors: dict[str, str]) -> PoolModel | None:
    path = f"models[{index}]"
    if not isinstance(raw, Mapping):
        errors[path] = "must be a JSON object"
        return None
    misplaced = [k for k in (*_SHARED_KEYS, *_POOL_KEYS) if k in raw]
    for key in misplaced:
        errors[f"{path}.{key}"] = "belongs to the pool, not to one model: set it once at the top"
    name = raw.get("name", _default_name(raw, index))
    if not isinstance(name, str) or not _NAME.match(name):
        errors[f"{path}.name"] = (
            "must be 1-40 lower-case letters, digits and dashes, starting with a letter or digit"
        )
    priority = _priority(raw, f"{path}.priority", errors)
    fields = {
        k: v for k, v in raw.items() if k not in ("name", "priority", *_SHARED_KEYS, *_POOL_KEYS)
    }
    shared = {k: d[k] for k in _SHARED_KEYS if k in d}
    try:
        spec = spec_from_dict({**fields, **shared})
    except SpecError as exc:
        for field, text in exc.errors.items():
            # The shared fields keep their own path: they are written once, at the top.
            top = field.split(".", 1)[0].split("[", 1)[0]
            errors[field if top in _SHARED_KEYS else f"{path}.{field}"] = text
        return None
    if spec.pinned is not None and spec.pinned.pp > 1:
        errors[f"{path}.pinned_layout.pp"] = (
            "must be 1: a pool keeps each instance inside one node, with tensor parallelism"
        )
        return None
    if misplaced or not isinstance(name, str) or not _NAME.match(name):
        return None
    return PoolModel(name=name, spec=spec, priority=priority)


def pool_spec_from_dict(d: Mapping[str, Any]) -> PoolSpec:
    """Validate a pool spec (`models: [...]` and one `hardware`); raise SpecError naming fields."""
    if not isinstance(d, Mapping):
        raise SpecError({"spec": "must be a JSON object"})
    raw_models = d.get("models")
    if not isinstance(raw_models, list) or not 2 <= len(raw_models) <= MAX_POOL_MODELS:
        raise SpecError({"models": f"must be a list of 2 to {MAX_POOL_MODELS} models"})
    unknown = sorted(set(d) - {"models", *_SHARED_KEYS, *_POOL_KEYS})
    errors: dict[str, str] = {key: "is not a pool field" for key in unknown}
    share_gpus = d.get("share_gpus", False)
    if not isinstance(share_gpus, bool):
        errors["share_gpus"] = "must be true or false"
    models = [_model(d, raw, i, errors) for i, raw in enumerate(raw_models)]
    seen: dict[str, int] = {}
    for i, m in enumerate(models):
        if m is None:
            continue
        if m.name in seen:
            errors[f"models[{i}].name"] = (
                f"{m.name!r} is already the name of models[{seen[m.name]}]: give each a name"
            )
        seen.setdefault(m.name, i)
    if errors:
        raise SpecError(errors)
    return PoolSpec(models=tuple(m for m in models if m is not None), share_gpus=share_gpus)
