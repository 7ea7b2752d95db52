"""Propose a decision record from a saved plan (DOMAIN.md §7; seed 001, closing section).

The plan's result is a stored JSON snapshot from whatever engine version saved it, so every key
is read defensively: a missing key makes the proposal vaguer, never an error.
"""

import json
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from planner.decisions.guidance import EvidenceKind, PoolKind
from planner.engine_texts_i18n import cite_after
from planner.models import Plan, Route
from planner.texts import render_action, render_text

MAX_ALTERNATIVES = 6
MAX_CONSEQUENCES = 8


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _rounded(value: Any) -> str:
    return str(round(value)) if isinstance(value, int | float) else "?"


def _bundle_text(resources: Mapping[str, Any]) -> str:
    """Return a bundle as Ray writes it, GPUs only, e.g. '{"GPU": 4}'."""
    gpu = resources.get("GPU")
    return json.dumps({"GPU": gpu} if gpu is not None else dict(resources))


def _hosts(plan: Plan, result: Mapping[str, Any]) -> list[str]:
    hosts = _list(_dict(result.get("node_selection")).get("hosts"))
    return [str(h) for h in (hosts or _list(plan.hostnames))]


def _nodes_phrase(hosts: list[str]) -> str:
    if len(hosts) == 1:
        return _("the node %(host)s") % {"host": hosts[0]}
    if len(hosts) == 2:
        return _("both nodes (%(hosts)s)") % {"hosts": ", ".join(hosts)}
    if not hosts:
        return _("every node of the deployment")
    return _("all %(count)s nodes (%(hosts)s)") % {"count": len(hosts), "hosts": ", ".join(hosts)}


def _best_candidate(result: Mapping[str, Any]) -> Mapping[str, Any]:
    chosen = _dict(result.get("recommendation")).get("candidate_id")
    candidates = [_dict(c) for c in _list(result.get("candidates"))]
    for c in candidates:
        if c.get("id") == chosen:
            return c
    return candidates[0] if candidates else {}


def _layout(c: Mapping[str, Any], plan: Plan) -> str:
    return "TP{}×PP{}×{}".format(
        c.get("tp", plan.tp), c.get("pp", plan.pp), c.get("replicas", plan.replicas)
    )


def _placement_text(placement: Mapping[str, Any], plan: Plan) -> tuple[str, str]:
    """Return (bundles, strategy) of one replica's placement group, as the plan computed them."""
    bundles = [_dict(b) for b in _list(placement.get("bundles"))]
    if bundles:
        texts = []
        for b in bundles:
            text = _bundle_text(_dict(b.get("resources")) or b)
            if b.get("node"):
                text += " → " + str(b["node"])
            texts.append(text)
        parts = ", ".join(texts)
    else:
        parts = " + ".join([_bundle_text({"GPU": plan.tp})] * plan.pp)
    return parts, str(placement.get("strategy") or "STRICT_SPREAD")


def _text(message: Mapping[str, Any]) -> str:
    """Return an engine message (id + params + English) in the current language."""
    return render_text(
        str(message.get("id", "")), _dict(message.get("params")), str(message.get("text") or "")
    ) or str(message.get("id", ""))


CANDIDATE_KINDS = {
    "single-gpu": gettext_lazy("one GPU"),
    "intra-node": gettext_lazy("inside one node"),
    "cross-node-tp": gettext_lazy("tensor parallel across nodes"),
    "cross-node-pp": gettext_lazy("pipeline stages across nodes"),
}


def _kind_label(kind: str) -> str:
    return str(CANDIDATE_KINDS.get(kind, kind))


def _unplaceable_reason(single: Mapping[str, Any]) -> str:
    """Say why one bundle cannot be placed: a bundle must fit on ONE node (DOMAIN.md §5)."""
    gpus = _dict(single.get("resources")).get("GPU", "?")
    return _("a bundle must fit on one node and no node has %(gpus)s free GPUs") % {"gpus": gpus}


SEVERITIES = {"high": gettext_lazy("high"), "medium": gettext_lazy("medium")}


def _signals_hit(result: Mapping[str, Any], direction: str) -> list[str]:
    return [
        _text(s)
        for s in map(_dict, _list(result.get("signals")))
        if s.get("hit") and s.get("direction") == direction
    ]


def _context(plan: Plan, result: Mapping[str, Any], hosts: list[str]) -> str:
    rec = _dict(result.get("recommendation"))
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
    reasons = [_dict(r) for r in _list(rec.get("reasons"))]
    if reasons:
        lines += ["", _("The plan's reasons:"), ""]
        lines += [f"- {_text(r)}" + cite_after(r.get("rule")) for r in reasons]
    return "\n".join(lines)


def _alternatives(result: Mapping[str, Any], best: Mapping[str, Any]) -> str:
    lines = []
    for c in map(_dict, _list(result.get("candidates"))):
        if c.get("id") == best.get("id"):
            continue
        label = "TP{}×PP{}×{}".format(c.get("tp", "?"), c.get("pp", "?"), c.get("replicas", "?"))
        if c.get("rejected_reason"):
            why = _("rejected: %(reason)s") % {"reason": c["rejected_reason"]}
        elif c.get("fits") is False:
            why = _("does not fit")
        else:
            why = _("ranked lower (score %(score)s, %(tok_s)s output tok/s)") % {
                "score": _num(c.get("score", "?")),
                "tok_s": _rounded(c.get("output_throughput_tok_s")),
            }
        kind = f" ({_kind_label(str(c['kind']))})" if c.get("kind") else ""
        lines.append(f"- **{label}**{kind}: {why}")
        if len(lines) >= MAX_ALTERNATIVES:
            break
    single = _dict(_dict(result.get("placement")).get("single_bundle"))
    if single and single.get("placeable") is False:
        lines.append(
            "- "
            + _("One %(bundle)s placement-group bundle: unplaceable, %(reason)s.")
            % {
                "bundle": _bundle_text(_dict(single.get("resources"))),
                "reason": _unplaceable_reason(single),
            }
        )
    return "\n".join(lines)


def _consequences(result: Mapping[str, Any]) -> str:
    lines = []
    for p in map(_dict, _list(result.get("pitfalls"))):
        if p.get("severity") not in ("high", "medium"):
            continue
        action = ""
        if p.get("action"):
            action = " → " + render_action(
                str(p.get("id", "")), _dict(p.get("params")), str(p["action"])
            )
        severity = str(SEVERITIES[str(p.get("severity"))])
        lines.append(f"- [{severity}] {_text(p)}{action}")
        if len(lines) >= MAX_CONSEQUENCES:
            break
    return "\n".join(lines)


def proposal_from_plan(plan: Plan, *, author_name: str) -> dict[str, Any]:
    """Return field values, responsibilities and evidence estimates proposed by `plan`.

    Dedicated pools propose "the existing platform reserves the nodes; mp; no Ray migration";
    shared pools (or a Ray backend) propose a placement group with the plan's bundles.
    """
    result = _dict(plan.result)
    rec = _dict(result.get("recommendation"))
    best = _best_candidate(result)
    placement = _dict(result.get("placement"))
    hosts = _hosts(plan, result)
    pool_kind = plan.pool_kind if plan.pool_kind in PoolKind.values else PoolKind.DEDICATED
    route = str(rec.get("route") or plan.route)
    backend = str(rec.get("executor_backend") or plan.executor_backend or "mp")
    balancer = str(rec.get("balancer") or plan.balancer or "none")
    tp, pp = int(best.get("tp") or plan.tp), int(best.get("pp") or plan.pp)
    replicas = int(best.get("replicas") or plan.replicas)
    nodes_per_replica = int(best.get("nodes_per_replica") or rec.get("nodes_per_replica") or 1)
    layout = _layout(best, plan)
    nodes = _nodes_phrase(hosts)
    head = hosts[0] if hosts else "node-1"
    others = ", ".join(hosts[1:]) or _("the other nodes")
    shared = pool_kind == PoolKind.SHARED
    uses_ray = backend == "ray" or route == Route.C
    bundles, strategy = _placement_text(placement, plan)

    resp: dict[str, dict[str, str]] = {}
    if shared:
        mechanism = _(
            "One placement group per replica with the bundles %(bundles)s, strategy "
            "%(strategy)s, reserved all or nothing; every bundle fits on one node."
        ) % {"bundles": bundles, "strategy": strategy}
        single = _dict(placement.get("single_bundle"))
        if single.get("placeable") is False:
            mechanism += " " + _("A single %(bundle)s bundle is unplaceable: %(reason)s.") % {
                "bundle": _bundle_text(_dict(single.get("resources"))),
                "reason": _unplaceable_reason(single),
            }
        resp["allocation"] = {"owner": _("Ray placement group"), "mechanism": mechanism}
    else:
        resp["allocation"] = {
            "owner": _("Existing platform"),
            "mechanism": _(
                "The existing platform reserves %(nodes)s as one group for this service; "
                "nothing else is scheduled on them."
            )
            % {"nodes": nodes},
        }

    if uses_ray:
        gpus_per_node = max(1, (tp * pp) // max(1, nodes_per_replica))
        resp["workers"] = {
            "owner": _("Ray cluster"),
            "mechanism": _(
                "`ray start --head --num-gpus=%(gpus)s` on %(head)s and `ray start "
                "--address=%(head)s:6379 --num-gpus=%(gpus)s` on %(others)s, then one `vllm "
                "serve --distributed-executor-backend ray` (%(layout)s) on the head. Check the "
                "Ray cluster, the actual bundles and which bundle each worker is bound to."
            )
            % {"gpus": gpus_per_node, "head": head, "others": others, "layout": layout},
        }
    elif nodes_per_replica > 1:
        resp["workers"] = {
            "owner": _("Existing platform") if not shared else "",
            "mechanism": _(
                "Executor mp: rank 0 on %(head)s (`vllm serve … --nnodes %(n)s --node-rank 0 "
                "--master-addr %(head)s`), the other ranks with `--headless` on %(others)s; "
                "node identities are the hostnames; one shared config (TP%(tp)s×PP%(pp)s); "
                "no Ray."
            )
            % {"head": head, "n": nodes_per_replica, "others": others, "tp": tp, "pp": pp},
        }
    else:
        resp["workers"] = {
            "owner": _("Existing platform") if not shared else "",
            "mechanism": _(
                "Executor mp: one `vllm serve` per replica (TP%(tp)s×PP%(pp)s, %(replicas)s "
                "replica(s)) on %(nodes)s from one shared config; node identities are the "
                "hostnames; no Ray."
            )
            % {"tp": tp, "pp": pp, "replicas": replicas, "nodes": nodes},
        }

    for_ray = _signals_hit(result, "for_ray")
    if shared or uses_ray:
        mechanism = _(
            "Replaces the hand-written whole-group reservation of the shared pool with "
            "placement groups. Name the script or job this deletes, or the Ray estate reused."
        )
    else:
        mechanism = _(
            "No Ray migration: the existing platform already reserves, starts and rebuilds the "
            "workers, so Ray would replace nothing we wrote. Revisit if models change often, "
            "the pool becomes shared or traffic swings widely."
        )
    if for_ray:
        mechanism += " " + _("Signals for Ray that hit: %(signals)s") % {
            "signals": "; ".join(for_ray)
        }
    resp["ray_benefit"] = {"owner": author_name, "mechanism": mechanism}

    if shared or uses_ray:
        resp["recovery"] = {
            "owner": "",
            "mechanism": _(
                "Name who rebuilds the instance after a worker dies: a Ray actor restarts only "
                "with max_restarts set (default 0), and a restart re-runs its constructor, it "
                "does not resume streams. Requests in flight end with an error and the client "
                "retries. An actor reappearing is not the service being available."
            ),
        }
    elif route == Route.A or replicas > 1:
        resp["recovery"] = {
            "owner": _("Existing platform"),
            "mechanism": _(
                "Rebuilds a failed vLLM instance (restart policy) while %(balancer)s takes the "
                "replica out of rotation (max_fails=2 fail_timeout=5s). Requests in flight on "
                "that replica end with an error and the client retries; streams are not "
                "resumed."
            )
            % {"balancer": balancer},
        }
    else:
        resp["recovery"] = {
            "owner": _("Existing platform"),
            "mechanism": _(
                "Rebuilds the whole instance on %(nodes)s (one failed rank takes the instance "
                "down). Requests in flight end with an error and the client retries; streams "
                "are not resumed."
            )
            % {"nodes": nodes},
        }

    proof = _(
        "Start-up, request-completion and failure-recovery records: the evidence table, "
        "measured under the same model, precision, parallelism, inputs and GPU placement."
    )
    if shared:
        proof += " " + _(
            "Plus resource-wait (how long the placement group stays pending) and placement "
            "evidence (which node each bundle landed on)."
        )
    resp["proof"] = {"owner": author_name, "mechanism": proof}

    if shared or uses_ray:
        sentence = _(
            "Adopt Ray placement groups, because whole-group reservation in the shared pool is "
            "hand-written today and a trial showed placement groups replace it."
        )
        decision_line = _(
            "%(route)s: %(layout)s, executor `%(backend)s`, one placement group per replica "
            "(%(bundles)s, %(strategy)s)."
        )
    else:
        sentence = _(
            "Keep mp, because the existing platform already reserves %(nodes)s, starts them "
            "and rebuilds failed instances."
        ) % {"nodes": nodes}
        decision_line = _(
            "%(route)s: %(layout)s, executor `%(backend)s`, balancer %(balancer)s; no Ray "
            "migration."
        )
    if route in (Route.A, Route.B, Route.C):
        route_label = _("Route %(route)s") % {"route": route}
    else:
        route_label = Route(route).label if route in Route.values else route
    decision = decision_line % {
        "route": route_label,
        "layout": layout,
        "backend": backend,
        "balancer": balancer,
        "bundles": bundles,
        "strategy": strategy,
    }
    title = _("Serve %(model)s as %(layout)s with executor %(backend)s") % {
        "model": plan.model_name,
        "layout": layout,
        "backend": backend,
    }
    estimates: dict[str, float] = {}
    if isinstance(best.get("ttft_ms"), int | float):
        estimates[EvidenceKind.TTFT_P95] = float(best["ttft_ms"])
    if isinstance(best.get("itl_ms"), int | float):
        estimates[EvidenceKind.ITL_P95] = float(best["itl_ms"])
    return {
        "title": title[:200],
        "pool_kind": pool_kind,
        "model_name": plan.model_name,
        "route": route if route in Route.values else "",
        "executor_backend": backend if backend in ("mp", "ray") else "",
        "layout": layout,
        "context": _context(plan, result, hosts),
        "decision_text": decision,
        "alternatives": _alternatives(result, best),
        "consequences": _consequences(result),
        "verifiable_sentence": sentence,
        "responsibilities": resp,
        "estimates": estimates,
    }


def plan_estimates(plan: Plan | None) -> dict[str, float]:
    """Return the plan's own TTFT/ITL estimates (ms) keyed by evidence kind, for display."""
    if plan is None:
        return {}
    best = _best_candidate(_dict(plan.result))
    out: dict[str, float] = {}
    for kind, key in ((EvidenceKind.TTFT_P95, "ttft_ms"), (EvidenceKind.ITL_P95, "itl_ms")):
        if isinstance(best.get(key), int | float):
            out[str(kind)] = float(best[key])
    return out
