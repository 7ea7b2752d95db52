"""Propose a decision record from a saved pool plan: several models on one pool (issue 31).

The same ownership template as a single-model plan (DOMAIN.md §7): the pool's route, each
model's GPUs and what the team owns. Only what the pool plan computed is stated; what it cannot
know (who reserves the nodes, who changes the set of models) is marked "To confirm".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from inventory.models import PoolKind
from planner.decisions.prefill import to_confirm
from planner.engine.pool import pool_spec_from_dict
from planner.engine.pool.result import PoolResult, Router
from planner.engine.result import Route
from planner.engine.spec import SpecError
from planner.models import PoolPlan
from planner.presentation.messages import text
from planner.presentation.numbers import amount
from planner.presentation.pool_page import ModelCard, pool_page

ROUTERS = {Router.LITELLM: "LiteLLM"}
LAYOUT_MAX = 60  # DecisionRecord.layout


@dataclass(frozen=True, slots=True)
class _PoolFacts:
    plan: PoolPlan
    result: PoolResult
    cards: tuple[ModelCard, ...]
    pool_kind: str

    @property
    def route_c(self) -> bool:
        return self.result.route.route == Route.C

    @property
    def hosts(self) -> list[str]:
        return sorted({i.host for m in self.result.placed for i in m.instances})

    @property
    def router(self) -> str:
        router = self.result.route.router
        return ROUTERS.get(router, str(router)) if router is not None else "LiteLLM"

    def layouts(self) -> str:
        """Return "chat TP8×1, router TP1×2" (every placed model)."""
        return ", ".join(f"{m.name} TP{m.tp}×{m.replicas}" for m in self.result.placed)

    def gpu_map(self) -> str:
        """Return "chat on a800-01 GPUs 0–7; router on a800-02 GPUs 0" (every placed model)."""
        return "; ".join(
            _("%(name)s on %(gpus)s")
            % {
                "name": c.model.name,
                "gpus": ", ".join(
                    _("%(host)s GPUs %(gpus)s") % {"host": h, "gpus": g} for h, g in c.gpus_by_host
                ),
            }
            for c in self.cards
        )


def _pool_kind(plan: PoolPlan) -> str:
    """Return the pool's kind as the inventory stated it for the offered nodes (dedicated when
    it says nothing, as the engine assumes, or when the snapshot no longer parses)."""
    try:
        hardware = pool_spec_from_dict(plan.engine_input).hardware
    except SpecError:
        return PoolKind.DEDICATED
    kinds = {hardware.pool_kind, *(n.pool_kind for n in hardware.nodes)}
    return PoolKind.SHARED if PoolKind.SHARED in kinds else PoolKind.DEDICATED


def _facts(plan: PoolPlan) -> _PoolFacts:
    result = PoolResult.from_dict(plan.result)
    return _PoolFacts(
        plan=plan, result=result, cards=pool_page(result).cards, pool_kind=_pool_kind(plan)
    )


def _context(f: _PoolFacts) -> str:
    plan = f.plan
    lines = [
        _(
            "Recorded from the saved pool plan “%(title)s” (engine %(engine)s, %(date)s): "
            "%(count)s models on %(hosts)s, %(pool)s."
        )
        % {
            "title": plan.title,
            "engine": plan.engine_version,
            "date": plan.created_at.date().isoformat(),
            "count": len(f.result.placed) + len(f.result.unplaced),
            "hosts": ", ".join(f.hosts) or "—",
            "pool": PoolKind(f.pool_kind).label,
        },
        "",
    ]
    for card in f.cards:
        m, p = card.model, card.model.prediction
        line = _("**%(name)s** (%(repo)s): TP%(tp)s × %(replicas)s on %(gpu)s, %(slo)s") % {
            "name": m.name,
            "repo": m.model,
            "tp": m.tp,
            "replicas": m.replicas,
            "gpu": m.gpu,
            "slo": _("SLO met") if m.slo_met else _("SLO missed"),
        }
        if p is not None:
            line += _("; about %(tok_s)s output tok/s at %(load)s sequences") % {
                "tok_s": amount(p.output_tok_s),
                "load": amount(m.concurrency),
            }
        lines.append(f"- {line}.")
    lines += ["", _("The route's reasons:"), ""]
    lines += [f"- {text(r)}" for r in f.result.route.reasons]
    return "\n".join(lines)


def _decision(f: _PoolFacts) -> str:
    if f.route_c:
        return _(
            "Route C: a Ray Serve LLM application for each model, all in one serve config "
            "(%(layouts)s), each replica's placement group matching the plan's GPUs."
        ) % {"layouts": f.layouts()}
    return _(
        "Route A: one vLLM deployment per model on the GPUs of the plan's map (%(layouts)s), "
        "behind one %(router)s endpoint that routes by the request's model field; no Ray."
    ) % {"layouts": f.layouts(), "router": f.router}


def _alternatives(f: _PoolFacts) -> str:
    other = (
        _("Route A: one vLLM deployment per model behind one %(router)s endpoint, no Ray.")
        if f.route_c
        else _("Route C: a Ray Serve LLM application for each model, all in one serve config.")
    ) % {"router": f.router}
    lines = [f"- {other} " + _("Its bundle is offered beside this one on the pool plan page.")]
    for u in f.result.unplaced:
        hints = "; ".join(text(h) for h in u.hints)
        lines.append(
            "- "
            + _("%(name)s is not placed: %(why)s.") % {"name": u.name, "why": text(u.reason)}
            + (" " + _("What would place it: %(hints)s.") % {"hints": hints} if hints else "")
        )
    return "\n".join(lines)


def _consequences(f: _PoolFacts) -> str:
    lines = []
    missed = [m.name for m in f.result.placed if not m.slo_met]
    if missed:
        lines.append(
            _("Missing its SLO or part of its load: %(names)s.") % {"names": ", ".join(missed)}
        )
    sharing = [m.name for m in f.result.placed if m.shares_gpus]
    if sharing:
        lines.append(
            _(
                "%(names)s share GPUs two by two, each with half its memory: a burst on one "
                "slows its neighbour, and the predictions assume both busy. %(confirm)s the "
                "neighbours' TPOT under load together in a benchmark run."
            )
            % {"names": ", ".join(sharing), "confirm": to_confirm()}
        )
    hurt = f.result.first_to_hurt
    if hurt is not None:
        lines.append(
            _("First to hurt when the load grows: %(name)s (×%(growth)s).")
            % {"name": hurt.name, "growth": amount(hurt.growth_headroom, 2)}
        )
    if f.route_c:
        lines.append(
            _(
                "Every model depends on one Ray cluster: losing its head node stops the serve "
                "applications unless the GCS is made fault tolerant (an external Redis)."
            )
        )
    else:
        lines.append(
            _(
                "%(router)s is the least proven part of the bundle and one process on "
                "%(host)s: every model's traffic passes through it; run the bundle's smoke test "
                "before clients use it."
            )
            % {"router": f.router, "host": f.hosts[0] if f.hosts else "—"}
        )
    return "\n".join(f"- {line}" for line in lines)


def _sentence(f: _PoolFacts) -> str:
    reasons = "; ".join(text(r) for r in f.result.route.reasons)
    if f.route_c:
        return _(
            "Adopt Ray Serve for the pool, because %(reasons)s (%(confirm)s a trial in which "
            "Serve replaces a failed replica of each model)."
        ) % {"reasons": reasons.rstrip("."), "confirm": to_confirm().lower()}
    return _(
        "Keep one vLLM deployment per model behind %(router)s without Ray, because "
        "%(reasons)s. %(confirm)s who changes the set of models and restarts failed servers."
    ) % {"router": f.router, "reasons": reasons.rstrip("."), "confirm": to_confirm()}


def _responsibilities(f: _PoolFacts) -> dict[str, dict[str, str]]:
    placement = {
        "owner": _("Ray placement group") if f.route_c else "",
        "mechanism": _(
            "The plan gives each model its GPUs: %(map)s. %(confirm)s who keeps these nodes "
            "reserved for the pool."
        )
        % {"map": f.gpu_map(), "confirm": to_confirm()},
    }
    if f.route_c:
        head = f.hosts[0] if f.hosts else "node-1"
        workers = {
            "owner": _("Ray cluster"),
            "mechanism": _(
                "`ray start --head` on %(head)s, the other nodes join it; `serve deploy` of the "
                "bundle's serve config starts one application per model (%(layouts)s)."
            )
            % {"head": head, "layouts": f.layouts()},
        }
        recovery = _(
            "Ray Serve restarts a failed replica of an application; requests in flight on it "
            "end with an error and the client retries. %(confirm)s who restores the Ray head "
            "node."
        ) % {"confirm": to_confirm()}
        benefit = _(
            "Ray Serve moves GPUs between the models' applications and restarts their "
            "replicas: %(reasons)s. %(confirm)s who runs the Ray cluster."
        )
    else:
        workers = {
            "owner": "",
            "mechanism": _(
                "The bundle starts one vLLM container per instance on its GPU indices "
                "(%(layouts)s) and one %(router)s proxy; no Ray."
            )
            % {"layouts": f.layouts(), "router": f.router},
        }
        recovery = _(
            "A failed vLLM container restarts on the same machine (restart policy "
            "unless-stopped); requests in flight on it end with an error and the client "
            "retries; nothing moves a model to other GPUs. %(confirm)s who does when a "
            "machine is lost."
        ) % {"confirm": to_confirm()}
        benefit = _(
            "No Ray: %(reasons)s. Revisit if models change often, GPUs should move between "
            "models, or the pool must heal itself."
        )
    return {
        "allocation": placement,
        "workers": workers,
        "ray_benefit": {
            "owner": "",
            "mechanism": benefit
            % {
                "reasons": "; ".join(text(r) for r in f.result.route.reasons).rstrip("."),
                "confirm": to_confirm(),
            },
        },
        "recovery": {"owner": "", "mechanism": recovery},
        "proof": {
            "owner": "",
            "mechanism": _(
                "Start-up, request-completion and failure-recovery records for each model: "
                "the evidence table, measured on the GPUs of the plan's map."
            ),
        },
    }


def proposal_from_pool_plan(plan: PoolPlan) -> dict[str, Any]:
    """Return field values and responsibilities proposed by a pool plan (the evidence table's
    estimates are one model's: a pool proposes none)."""
    f = _facts(plan)
    route = f.result.route.route
    names = [m.name for m in (*f.result.placed, *f.result.unplaced)]
    title = _("Serve %(models)s on one pool as Route %(route)s") % {
        "models": ", ".join(names),
        "route": route.value,
    }
    layout = _("%(models)s models on %(gpus)s GPUs") % {
        "models": len(f.result.placed),
        "gpus": f.result.gpus_used,
    }
    return {
        "title": title[:200],
        "pool_kind": f.pool_kind,
        "model_name": ", ".join(m.model for m in f.result.placed)[:200],
        "route": route.value,
        "executor_backend": "ray" if f.route_c else "mp",
        "layout": layout[:LAYOUT_MAX],
        "context": _context(f),
        "decision_text": _decision(f),
        "alternatives": _alternatives(f),
        "consequences": _consequences(f),
        "verifiable_sentence": _sentence(f),
        "responsibilities": _responsibilities(f),
        "estimates": {},
    }
