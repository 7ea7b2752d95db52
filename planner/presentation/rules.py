"""The rules the planner applies as readers see them cited: headings and texts for the rules
page, the label of a cited rule ("§3 Route A") and the public pages behind it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from planner.presentation.references import references
from planner.presentation.template_types import Rule

# DOMAIN.md rules, as users read them next to a reason. Anchor -> (heading, rule text).
RULES: dict[Rule, tuple[Any, Any]] = {
    Rule.WORDS: (
        _("§1 Words"),
        _(
            "TP splits every weight matrix across GPUs and all-reduces twice per layer, so it "
            "needs NVLink-class bandwidth; PP splits the layers into stages and sends one "
            "activation per stage boundary; replicas are full copies with no traffic between "
            "them, behind a load balancer."
        ),
    ),
    Rule.NUMBERS: (
        _("§2 Hard numbers"),
        _(
            "Cross-node links are an order of magnitude slower than NVLink (25 GbE ≈ 2 GB/s "
            "effective for NCCL, NVLink ≥ 600 GB/s). Weights ≈ parameters × bytes per "
            "parameter; vLLM takes gpu_memory_utilization of each GPU, subtracts weights, "
            "activation peak and non-torch memory, and the rest is the KV cache in blocks of "
            "16 tokens. The planner follows the arithmetic, not an article's claim."
        ),
    ),
    Rule.ROUTES: (
        _("§3 The three routes"),
        _(
            "Decision order: does it fit one machine (after quantization if acceptable)? Then "
            "one node, and with two machines two replicas behind a balancer. If it must span "
            "nodes, check the link first. Frequent model changes or shared resources point to "
            "Ray Serve."
        ),
    ),
    Rule.ROUTE_A: (
        _("§3 Route A: replicas inside nodes"),
        _(
            "Every replica inside one node, TP over NVLink, replicas behind Nginx (least_conn) "
            "or another gateway: no cross-node traffic, isolated failure domains, near-linear "
            "throughput. Precondition: weights and KV cache for the target context fit a node."
        ),
    ),
    Rule.ROUTE_B: (
        _("§3 Route B: one instance across nodes"),
        _(
            "Cross-node TP, or TP per node × PP across nodes (gentler on the network), with the "
            "mp or ray backend. Use only when memory forces it; below 10 GbE quantize or pick a "
            "smaller model, 25 GbE works with care, 400 Gb InfiniBand is comfortable."
        ),
    ),
    Rule.ROUTE_C: (
        _("§3 Route C: Ray Serve pool"),
        _(
            "Many models sharing a GPU pool, fluctuating traffic, self-healing. num_gpus must "
            "equal TP × PP of the engine inside; keep min_replicas ≥ 1 because of cold starts; "
            "actor restarts do not resume in-flight streams."
        ),
    ),
    Rule.SIGNALS: (
        _("§4 Signals for and against Ray"),
        _(
            "For Ray: models change often, several models share one pool, traffic swings "
            "widely, a self-healing SLO, Ray already runs here, cross-node GPUs without "
            "hand-managed NCCL. One hit is the threshold to consider Ray. Against: one or two "
            "fixed machines with a fixed model, steady traffic, an existing gateway, "
            "quantization fits one node, no Ray operations experience."
        ),
    ),
    Rule.PLACEMENT: (
        _("§5 Shared pools and placement"),
        _(
            "Dedicated GPUs already reserved by a platform: mp is enough. A shared pool needs "
            "the whole group reserved atomically; a Ray placement-group bundle must fit on one "
            'node, so two {"GPU": 4} bundles place on 2 × 4 GPUs where one {"GPU": 8} never does.'
        ),
    ),
    Rule.PITFALLS: (
        _("§6 Pitfalls"),
        _(
            "NCCL on the wrong NIC, RoCE GID index, InfiniBand probing on plain TCP, Ray version "
            "drift, num_gpus ≠ TP, GPU memory shared with something else, Docker shared memory, "
            "weights readable on every node, unpinned images, prompt prefixes that defeat the "
            "prefix cache."
        ),
    ),
    Rule.RECORD: (
        _("§7 The decision record"),
        _(
            "Record who allocates the GPUs, who starts the workers, the concrete benefit of "
            "Ray, how traffic comes back after a failure and how the choice is proven, then one "
            "verifiable sentence. Evidence is measured, never assumed."
        ),
    ),
    Rule.SCENARIOS: (
        _("§8 Scenarios"),
        _(
            "The planner is checked against six scenarios from the source articles (S1–S5), "
            "including where the articles disagree with the arithmetic."
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class RuleRef:
    anchor: str
    label: str  # "§3 Route A", in the reader's language
    heading: str
    text: str


def rule_label(rule: Rule) -> str:
    """Return the label of a rule: "§3", or "§3 Route A" in the reader's language."""
    section, _sep, route = rule.value.removeprefix("rule-").partition("-route-")
    if route:
        return gettext("§{section} Route {route}").format(section=section, route=route.upper())
    return f"§{section}"


def rule_ref(rule: Rule) -> RuleRef:
    heading, text = RULES[rule]
    return RuleRef(anchor=rule.value, label=rule_label(rule), heading=str(heading), text=str(text))


def sources_text(rules: Iterable[Rule]) -> str:
    """Return the addresses of the public pages behind `rules`, joined ("" if none): in running
    text (exports, decision records) the address is what a reader opens, in any language; the
    pages show each with its title. The project's own notes are never cited."""
    refs = dict.fromkeys(ref for rule in rules for ref in references(rule))
    return gettext(", ").join(r.url for r in refs)


def citation_text(rules: Iterable[Rule]) -> str:
    """Return a whole citation for running text: "see The three routes: https://…",
    translated (the rule's heading names the section of this product's rules page)."""
    rules = tuple(rules)
    if not rules:
        return ""
    headings = gettext(", ").join(rule_heading(r) for r in rules)
    cited = sources_text(rules)
    if cited:
        return gettext("see {rules}: {sources}").format(rules=headings, sources=cited)
    return gettext("see {rules}").format(rules=headings)


def rule_heading(rule: Rule) -> str:
    """Return a rule's heading without its section number: "The three routes"."""
    heading = str(RULES[rule][0])
    return heading.split(" ", 1)[1] if heading.startswith("§") else heading
