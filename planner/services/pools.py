"""Evaluate and save pool plans: several models on one set of machines (issue 31).

A pool spec is the single-model spec's fields per model under `models: [...]`, with one
`hardware` (inventory hostnames, a pool or the fleet, as for one model), `operations`,
`network`, `vllm_version` and `step_backend`. Inventory names are resolved here once (fetch),
then the engine places every model (compute).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from core.json_input import nul_paths
from planner.engine.configs.allocate import UnknownHost
from planner.engine.configs.allocation import BundleClash
from planner.engine.configs.deploy.files import Registration, deploy_files
from planner.engine.pool import PoolResult, plan_pool, pool_spec_from_dict
from planner.engine.pool.bundles import pool_bundle as build_pool_route_bundle
from planner.engine.pool.spec import MAX_POOL_MODELS, is_pool_spec
from planner.engine.result import Route
from planner.engine.spec import SpecError
from planner.models import PoolPlan
from planner.services.bundles import BundleUnavailable, bundle_files
from planner.services.plans import engine_version
from planner.services.resolve import resolve_hardware, resolve_model

__all__ = [
    "PoolEvaluation",
    "is_pool_spec",
    "pool_archive",
    "pool_bundle",
    "pool_create",
    "pool_evaluate",
    "pool_model_names",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolEvaluation:
    spec: dict[str, Any]
    engine_input: dict[str, Any]
    result: PoolResult
    hostnames: list[str]


def _resolve(spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return the engine input (inventory names resolved) and the inventory machines offered."""
    errors: dict[str, str] = {
        where: "must not contain NUL (\\x00) characters" for where in nul_paths(spec)
    }
    if errors:
        raise SpecError(errors)
    models = spec.get("models")
    if not isinstance(models, list) or not 2 <= len(models) <= MAX_POOL_MODELS:
        raise SpecError({"models": f"must be a list of 2 to {MAX_POOL_MODELS} models"})
    engine_input = {k: v for k, v in spec.items() if k not in ("title", "models")}
    hostnames: list[str] = []
    if "hardware" in spec:
        engine_input["hardware"], hostnames = resolve_hardware(spec["hardware"], errors)
    resolved = []
    for i, raw in enumerate(models):
        if not isinstance(raw, Mapping):
            resolved.append(raw)  # the engine names it
            continue
        own: dict[str, str] = {}
        model, _slug = resolve_model(raw.get("model"), own)
        errors.update({f"models[{i}].{k}": v for k, v in own.items()})
        resolved.append({**raw, "model": model})
    if errors:
        raise SpecError(errors)
    engine_input["models"] = resolved
    return engine_input, [h for h in hostnames if h]


def pool_evaluate(*, spec: Mapping[str, Any]) -> PoolEvaluation:
    """Resolve a pool spec and place its models; raise SpecError naming every bad field."""
    if not isinstance(spec, Mapping):
        raise SpecError({"spec": "must be a JSON object"})
    engine_input, hostnames = _resolve(spec)
    result = plan_pool(pool_spec_from_dict(engine_input))
    return PoolEvaluation(
        spec=dict(spec), engine_input=engine_input, result=result, hostnames=hostnames
    )


def pool_model_names(plan: PoolPlan) -> list[str]:
    """Return the engine's name of each model of a saved pool plan, in its spec's order (a
    model without a `name` has the one the engine derived from its repository)."""
    try:
        return [m.name for m in pool_spec_from_dict(plan.engine_input).models]
    except SpecError:  # a snapshot the current engine refuses: no what-if can run on it
        return []


def _title(evaluation: PoolEvaluation) -> str:
    names = [m.name for m in (*evaluation.result.placed, *evaluation.result.unplaced)]
    return f"Pool · {', '.join(names)} · Route {evaluation.result.route.route.value}"


@transaction.atomic
def pool_create(*, spec: Mapping[str, Any], actor: Any, title: str = "") -> PoolPlan:
    """Evaluate a pool spec and store it as an immutable PoolPlan snapshot."""
    evaluation = pool_evaluate(spec=spec)
    result = evaluation.result
    used = {i.host for m in result.placed for i in m.instances}
    plan = PoolPlan(
        title=(title or str(spec.get("title") or "") or _title(evaluation))[:200],
        author=actor,
        spec={k: v for k, v in evaluation.spec.items() if k != "title"},
        engine_input=evaluation.engine_input,
        result=result.to_dict(),
        engine_version=engine_version(),
        route=result.route.route.value,
        model_names=[m.name for m in (*result.placed, *result.unplaced)],
        gpus_used=result.gpus_used,
        unplaced=len(result.unplaced),
        hostnames=[h for h in evaluation.hostnames if h in used] or evaluation.hostnames,
    )
    plan.full_clean()
    plan.save()
    return plan


def bundle_route(plan: PoolPlan, route: str | None = None) -> Route:
    """Return the route whose bundle to build: the one asked (A or C), else the plan's own."""
    asked = (route or plan.route or "").upper()
    if asked not in (Route.A, Route.C):
        raise BundleUnavailable(
            _("A pool's bundle is Route A or Route C, not %(r)s.") % {"r": asked}
        )
    return Route(asked)


def pool_bundle(
    plan: PoolPlan, *, serveplan_url: str = "", route: str | None = None
) -> dict[str, str]:
    """Return the files of a pool plan's bundle, README first: Route A (every model's vLLM
    servers on its planned GPUs behind one LiteLLM proxy) or Route C (one Ray cluster, one
    serve config with an application per placed model); the plan's route unless `route` says.

    Raise BundleUnavailable when no model is placed, the route is unknown or the allocation
    clashes.
    """
    chosen = bundle_route(plan, route)
    result = PoolResult.from_dict(plan.result)
    if not result.placed:
        raise BundleUnavailable(_("No model of this pool is placed: there is nothing to deploy."))
    try:
        pool = pool_spec_from_dict(plan.engine_input)
    except SpecError as exc:
        raise BundleUnavailable(
            _("The plan's input does not validate any more: %(errors)s") % {"errors": exc}
        ) from exc
    try:
        bundle = build_pool_route_bundle(pool, result.placed, chosen)
    except (BundleClash, UnknownHost, ValueError) as exc:
        raise BundleUnavailable(_("No bundle for this pool: %(why)s") % {"why": exc}) from exc
    try:
        registration = Registration(serveplan_url=serveplan_url)
    except ValueError:  # a site URL that is no plain http(s) URL: the operator sets it
        registration = Registration()
    extra = {f.name: f.text for f in deploy_files(bundle, registration)}
    return bundle_files(bundle.to_dict(), extra=extra)


def pool_archive(
    plan: PoolPlan, *, serveplan_url: str = "", route: str | None = None
) -> tuple[bytes, str]:
    """Return (ZIP, file name) of a pool plan's bundle for `route` (the plan's own by default)."""
    chosen = bundle_route(plan, route)
    files = pool_bundle(plan, serveplan_url=serveplan_url, route=chosen.value)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    name = f"serveplan-pool-{plan.public_id}-route-{chosen.value.lower()}.zip"
    return buffer.getvalue(), name
