"""Propose a decision record from a saved plan (DOMAIN.md §7; seed 001, closing section).

The plan's result is read through planner.selectors, typed, whatever engine version saved it;
what a legacy snapshot lacks makes the proposal vaguer, never an error.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from inventory.models import PoolKind
from planner.decisions.guidance import EvidenceKind
from planner.engine.result import (
    Candidate,
    Placement,
    PlanResult,
    Recommendation,
    Severity,
    SingleBundle,
)
from planner.models import Plan, Route
from planner.presentation import messages
from planner.presentation.pitfalls import relevant_pitfalls
from planner.presentation.ray_answer import signals_sentence
from planner.presentation.routes import route_options
from planner.selectors import plan_result

MAX_ALTERNATIVES = 6


def to_confirm() -> str:
    """Return the marker of what the team must confirm: the plan cannot know it."""
    return _("To confirm:")


MAX_CONSEQUENCES = 8


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _bundle_text(resources: Mapping[str, Any]) -> str:
    """Return a bundle as Ray writes it, GPUs only, e.g. '{"GPU": 4}'."""
    gpu = resources.get("GPU")
    return json.dumps({"GPU": gpu} if gpu is not None else dict(resources))


def _hosts(plan: Plan, result: PlanResult) -> list[str]:
    return list(result.hosts or plan.hostnames or [])


def _nodes_phrase(hosts: list[str]) -> str:
    if len(hosts) == 1:
        return _("the node %(host)s") % {"host": hosts[0]}
    if len(hosts) == 2:
        return _("both nodes (%(hosts)s)") % {"hosts": ", ".join(hosts)}
    if not hosts:
        return _("every node of the deployment")
    return _("all %(count)s nodes (%(hosts)s)") % {"count": len(hosts), "hosts": ", ".join(hosts)}


def _placement_text(placement: Placement, plan: Plan) -> tuple[str, str]:
    """Return (bundles, strategy) of one replica's placement group, as the plan computed them."""
    if placement.bundles:
        parts = ", ".join(
            _bundle_text(b.resources) + (f" → {b.node}" if b.node else "")
            for b in placement.bundles
        )
    else:
        parts = " + ".join([_bundle_text({"GPU": plan.tp})] * plan.pp)
    return parts, str(placement.strategy)


CANDIDATE_KINDS = {
    "single-gpu": gettext_lazy("one GPU"),
    "intra-node": gettext_lazy("inside one node"),
    "cross-node-tp": gettext_lazy("tensor parallel across nodes"),
    "cross-node-pp": gettext_lazy("pipeline stages across nodes"),
}


def _kind_label(kind: str) -> str:
    return str(CANDIDATE_KINDS.get(kind, kind))


def _unplaceable_reason(single: SingleBundle) -> str:
    """Say why one bundle cannot be placed: a bundle must fit on ONE node (DOMAIN.md §5)."""
    gpus = single.resources.get("GPU", "?")
    return _("a bundle must fit on one node and no node has %(gpus)s free GPUs") % {"gpus": gpus}


SEVERITIES = {Severity.HIGH: gettext_lazy("high"), Severity.MEDIUM: gettext_lazy("medium")}


def _signals_hit(result: PlanResult, direction: str) -> list[str]:
    return [messages.text(s.message) for s in result.signals if s.hit and s.direction == direction]


def _context(plan: Plan, result: PlanResult, hosts: list[str]) -> str:
    lines = [
        _(
            "Recorded from the saved plan “%(title)s” (engine %(engine)s, %(date)s): "
            "%(model)s on %(hosts)s, %(pool)s."
        )
        % {
            "title": plan.title,
            "engine": plan.engine_version,
            "date": plan.created_at.date().isoformat(),
            "model": plan.model_name,
            "hosts": ", ".join(hosts) or "—",
            "pool": PoolKind(plan.pool_kind).label
            if plan.pool_kind in PoolKind.values
            else plan.pool_kind,
        }
    ]
    reasons = result.recommendation.reasons
    if reasons:
        lines += ["", _("The plan's reasons:"), ""]
        lines += [f"- {messages.with_citation(r)}" for r in reasons]
    return "\n".join(lines)


def _routes_evaluated(result: PlanResult) -> list[str]:
    """Return every route the plan evaluated with its verdict (none for a snapshot without
    candidates: nothing is said that the plan did not compute)."""
    if not result.candidates:
        return []
    return [
        f"- **{option.title}**"
        + (f" ({option.layout})" if option.layout else "")
        + f": {option.verdict}"
        for option in route_options(result)
    ]


def _alternatives(result: PlanResult, best: Candidate | None) -> str:
    lines = _routes_evaluated(result)
    layouts: list[str] = []
    for c in result.candidates:
        if best is not None and c.id == best.id:
            continue
        if c.rejected_reason:
            why = _("rejected: %(reason)s") % {"reason": messages.text(c.rejected_reason)}
        elif not c.fits:
            why = _("does not fit")
        else:
            why = _("ranked lower (score %(score)s)") % {"score": _num(c.score)}
        layouts.append(f"- **{c.label}** ({_kind_label(c.kind)}): {why}")
        if len(layouts) >= MAX_ALTERNATIVES:
            break
    if layouts:
        lines += ["", _("Layouts considered:"), "", *layouts]
    single = result.placement.single_bundle
    if single.resources and not single.placeable:
        lines.append(
            "- "
            + _("One %(bundle)s placement-group bundle: unplaceable, %(reason)s.")
            % {
                "bundle": _bundle_text(single.resources),
                "reason": _unplaceable_reason(single),
            }
        )
    return "\n".join(lines)


def _consequences(result: PlanResult) -> str:
    """Return the high and medium pitfalls of the chosen layout (no cross-node NCCL risk for
    replicas that each stay inside one node)."""
    lines = []
    for p in relevant_pitfalls(result):
        if p.severity not in SEVERITIES:
            continue
        action = messages.action(p.message)
        severity = str(SEVERITIES[p.severity])
        lines.append(
            f"- [{severity}] {messages.text(p.message)}" + (f" → {action}" if action else "")
        )
        if len(lines) >= MAX_CONSEQUENCES:
            break
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the prefill's sections say about a plan, read once."""

    plan: Plan
    result: PlanResult
    hosts: list[str]
    pool_kind: str
    route: str
    backend: str
    balancer: str
    nodes_per_replica: int
    bundles: str
    strategy: str

    @property
    def rec(self) -> Recommendation:
        return self.result.recommendation

    @property
    def nodes(self) -> str:
        return _nodes_phrase(self.hosts)

    @property
    def head(self) -> str:
        return self.hosts[0] if self.hosts else "node-1"

    @property
    def others(self) -> str:
        return ", ".join(self.hosts[1:]) or _("the other nodes")

    @property
    def shared(self) -> bool:
        return self.pool_kind == PoolKind.SHARED

    @property
    def uses_ray(self) -> bool:
        return self.backend == "ray" or self.route == Route.C


def _facts(plan: Plan) -> _Facts:
    result = plan_result(plan)
    rec, best = result.recommendation, result.best
    bundles, strategy = _placement_text(result.placement, plan)
    return _Facts(
        plan=plan,
        result=result,
        hosts=_hosts(plan, result),
        pool_kind=plan.pool_kind if plan.pool_kind in PoolKind.values else PoolKind.DEDICATED,
        route=str(rec.route),
        backend=str(rec.executor_backend),
        balancer=str(rec.balancer),
        nodes_per_replica=max(1, best.nodes_per_replica if best else rec.nodes_per_replica),
        bundles=bundles,
        strategy=strategy,
    )


def _allocation(f: _Facts) -> dict[str, str]:
    """Who reserves the GPUs: the placement group on a shared pool, else to confirm."""
    if not f.shared:
        return {
            "owner": "",
            "mechanism": _(
                "The plan assumes %(nodes)s are dedicated to this service. %(confirm)s who keeps "
                "them reserved for it (a scheduler, a platform, or an agreement that nothing "
                "else runs there)."
            )
            % {"nodes": f.nodes, "confirm": to_confirm()},
        }
    mechanism = _(
        "One placement group per replica with the bundles %(bundles)s, strategy "
        "%(strategy)s, reserved all or nothing; every bundle fits on one node."
    ) % {"bundles": f.bundles, "strategy": f.strategy}
    single = f.result.placement.single_bundle
    if single.resources and not single.placeable:
        mechanism += " " + _("A single %(bundle)s bundle is unplaceable: %(reason)s.") % {
            "bundle": _bundle_text(single.resources),
            "reason": _unplaceable_reason(single),
        }
    return {"owner": _("Ray placement group"), "mechanism": mechanism}


def _workers(f: _Facts) -> dict[str, str]:
    """Who starts the workers: the Ray cluster, or mp on each node."""
    tp, pp, replicas = f.rec.tp, f.rec.pp, f.rec.replicas
    if f.uses_ray:
        gpus_per_node = max(1, (tp * pp) // max(1, f.nodes_per_replica))
        return {
            "owner": _("Ray cluster"),
            "mechanism": _(
                "`ray start --head --num-gpus=%(gpus)s` on %(head)s and `ray start "
                "--address=%(head)s:6379 --num-gpus=%(gpus)s` on %(others)s, then one `vllm "
                "serve --distributed-executor-backend ray` (%(layout)s) on the head. Check the "
                "Ray cluster, the actual bundles and which bundle each worker is bound to."
            )
            % {"gpus": gpus_per_node, "head": f.head, "others": f.others, "layout": f.rec.label},
        }
    if f.nodes_per_replica > 1:
        return {
            "owner": "",
            "mechanism": _(
                "Executor mp: rank 0 on %(head)s (`vllm serve … --nnodes %(n)s --node-rank 0 "
                "--master-addr %(head)s`), the other ranks with `--headless` on %(others)s; "
                "node identities are the hostnames; one shared config (TP%(tp)s×PP%(pp)s); "
                "no Ray."
            )
            % {"head": f.head, "n": f.nodes_per_replica, "others": f.others, "tp": tp, "pp": pp},
        }
    return {
        "owner": "",
        "mechanism": ngettext(
            "Executor mp: one `vllm serve` per replica (TP%(tp)s×PP%(pp)s, %(replicas)s "
            "replica) on %(nodes)s from one shared config; node identities are the "
            "hostnames; no Ray.",
            "Executor mp: one `vllm serve` per replica (TP%(tp)s×PP%(pp)s, %(replicas)s "
            "replicas) on %(nodes)s from one shared config; node identities are the "
            "hostnames; no Ray.",
            replicas,
        )
        % {"tp": tp, "pp": pp, "replicas": replicas, "nodes": f.nodes},
    }


def _ray_benefit(f: _Facts) -> dict[str, str]:
    """What Ray brings here, from the signals that hit. Who judges Ray's benefit is a person
    the plan cannot know: left empty for the team (a decision is not ready until they do)."""
    if f.shared or f.uses_ray:
        mechanism = _(
            "Placement groups reserve the GPUs of each replica as a group. %(confirm)s the "
            "reservation script or job this replaces, or the Ray estate it reuses."
        ) % {"confirm": to_confirm()}
    else:
        mechanism = _(
            "No Ray: %(signals)s Revisit if models change often, the pool becomes shared or "
            "traffic swings widely."
        ) % {"signals": signals_sentence(f.result)}
    for_ray = _signals_hit(f.result, "for_ray")
    if for_ray:
        mechanism += " " + _("Signals for Ray that hit: %(signals)s") % {
            "signals": "; ".join(for_ray)
        }
    return {"owner": "", "mechanism": mechanism}


def _recovery(f: _Facts) -> dict[str, str]:
    """What happens when a server dies, and what the team must name as restarting it."""
    if f.shared or f.uses_ray:
        mechanism = _(
            "Name who rebuilds the instance after a worker dies: a Ray actor restarts only "
            "with max_restarts set (default 0), and a restart re-runs its constructor, it "
            "does not resume streams. Requests in flight end with an error and the client "
            "retries. An actor reappearing is not the service being available."
        )
    elif f.route == Route.A or f.rec.replicas > 1:
        mechanism = _(
            "%(balancer)s takes a failed replica out of rotation (max_fails=2 "
            "fail_timeout=5s); requests in flight on it end with an error and the client "
            "retries; streams are not resumed. %(confirm)s what restarts the failed vLLM "
            "server (a restart policy, systemd or a platform)."
        ) % {"balancer": f.balancer, "confirm": to_confirm()}
    else:
        mechanism = _(
            "One failed rank takes the instance on %(nodes)s down; requests in flight end "
            "with an error and the client retries; streams are not resumed. %(confirm)s "
            "what restarts the instance (a restart policy, systemd or a platform)."
        ) % {"nodes": f.nodes, "confirm": to_confirm()}
    return {"owner": "", "mechanism": mechanism}


def _proof(f: _Facts) -> dict[str, str]:
    """The records that prove the decision, with the placement's own on a shared pool."""
    proof = _(
        "Start-up, request-completion and failure-recovery records: the evidence table, "
        "measured under the same model, precision, parallelism, inputs and GPU placement."
    )
    if f.shared:
        proof += " " + _(
            "Plus resource-wait (how long the placement group stays pending) and placement "
            "evidence (which node each bundle landed on)."
        )
    return {"owner": "", "mechanism": proof}


def _decision_and_sentence(f: _Facts) -> tuple[str, str]:
    """Return the decision in one line and the verifiable sentence that backs it."""
    if f.shared or f.uses_ray:
        sentence = _(
            "Adopt Ray placement groups, because the pool is shared and the GPUs of each "
            "replica must be reserved as a group (%(confirm)s a trial that shows it)."
        ) % {"confirm": to_confirm().lower()}
        decision_line = _(
            "%(route)s: %(layout)s, executor `%(backend)s`, one placement group per replica "
            "(%(bundles)s, %(strategy)s)."
        )
    else:
        sentence = _(
            "Keep mp without Ray, because %(signals)s %(confirm)s who reserves %(nodes)s and "
            "restarts failed servers."
        ) % {
            "signals": signals_sentence(f.result).rstrip(".") + ".",
            "confirm": to_confirm(),
            "nodes": f.nodes,
        }
        decision_line = _(
            "%(route)s: %(layout)s, executor `%(backend)s`, balancer %(balancer)s; no Ray "
            "migration."
        )
    if f.route in (Route.A, Route.B, Route.C):
        route_label = _("Route %(route)s") % {"route": f.route}
    else:
        route_label = Route(f.route).label if f.route in Route.values else f.route
    decision = decision_line % {
        "route": route_label,
        "layout": f.rec.label,
        "backend": f.backend,
        "balancer": f.balancer,
        "bundles": f.bundles,
        "strategy": f.strategy,
    }
    return decision, sentence


def proposal_from_plan(plan: Plan) -> dict[str, Any]:
    """Return field values, responsibilities and evidence estimates proposed by `plan`.

    Only what the plan and the answers support is stated: dedicated pools propose mp and no
    Ray, from the signals that hit; shared pools (or a Ray backend) propose a placement group
    with the plan's bundles. What the plan cannot know (who reserves the nodes, what restarts a
    failed server) is marked "To confirm", with no owner.
    """
    f = _facts(plan)
    layout, best = f.rec.label, f.result.best
    decision, sentence = _decision_and_sentence(f)
    title = _("Serve %(model)s as %(layout)s with executor %(backend)s") % {
        "model": plan.model_name,
        "layout": layout,
        "backend": f.backend,
    }
    return {
        "title": title[:200],
        "pool_kind": f.pool_kind,
        "model_name": plan.model_name,
        "route": f.route if f.route in Route.values else "",
        "executor_backend": f.backend if f.backend in ("mp", "ray") else "",
        "layout": layout,
        "context": _context(plan, f.result, f.hosts),
        "decision_text": decision,
        "alternatives": _alternatives(f.result, best),
        "consequences": _consequences(f.result),
        "verifiable_sentence": sentence,
        "responsibilities": {
            "allocation": _allocation(f),
            "workers": _workers(f),
            "ray_benefit": _ray_benefit(f),
            "recovery": _recovery(f),
            "proof": _proof(f),
        },
        "estimates": _estimates(best),
    }


def _estimates(best: Candidate | None) -> dict[str, float]:
    """Return the layout's TTFT/ITL p95 estimates (ms) keyed by evidence kind: the serving
    model's p95, the figures the plan page shows; a plan saved before the serving model has
    only its closed-form means, which are no p95 and are not proposed."""
    if best is None or best.serving is None:
        return {}
    return {
        EvidenceKind.TTFT_P95: round(best.serving.ttft_p95_ms, 1),
        EvidenceKind.ITL_P95: round(best.serving.itl_p95_ms, 2),
    }


def plan_estimates(plan: Plan | None) -> dict[str, float]:
    """Return the plan's own TTFT/ITL estimates (ms) keyed by evidence kind, for display."""
    if plan is None:
        return {}
    return {str(kind): value for kind, value in _estimates(plan_result(plan).best).items()}
