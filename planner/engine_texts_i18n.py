"""The engine's English that is not one of its message templates, in the reader's language.

planner/texts.py translates every engine message by id. The engine also speaks English in a
few other places: some message parameters are phrases ("why", "verdict", a runner-up note, a
link kind, a traffic shape), candidates and placement bundles carry a rejected reason, and rules
are cited as "§3 Route A (000 §2, 002 §3)".

Each known phrase is listed here once, as the engine writes it, with {placeholders} where the
engine fills in values; gettext gives the reader's wording. A phrase is matched against the
engine's text as a whole, its placeholders are captured and themselves translated when they are
known phrases, and the translated template is filled in. Text the engine writes that is not
listed here is shown as the engine wrote it. tests/i18n/test_engine_texts.py keeps the list in
step with the engine.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping
from typing import Any

from django.utils.translation import get_language, gettext, gettext_noop, pgettext_lazy

# Phrases the engine puts in message params and results (planner/engine/*.py).
PHRASES: tuple[str, ...] = (
    # why this executor backend (plan.py)
    gettext_noop("Ray Serve deployments run on a Ray cluster"),
    gettext_noop(
        "the pool is shared, so a placement group must reserve every GPU of the replica atomically"
    ),
    gettext_noop("Ray already manages these nodes' processes"),
    gettext_noop(
        "dedicated nodes: one explicit vllm serve per node (--nnodes/--node-rank/--master-addr, "
        "--headless on the workers), no Ray to operate"
    ),
    gettext_noop("every replica lives inside one node; multiprocessing workers, no Ray"),
    # a pinned layout's verdict (plan.py)
    gettext_noop("does not fit: {reason}"),
    gettext_noop("does not fit at {dtype} weights: {reason}"),
    gettext_noop("fits but does not hold the target concurrency"),
    gettext_noop("fits"),
    gettext_noop("cannot be laid out on nodes of this size"),
    # the runner-up note of layout_choice (plan.py)
    gettext_noop("; it cannot hold {concurrency} sequences of {max_model_len} tokens"),
    gettext_noop("; its replicas span nodes"),
    gettext_noop(
        "; decode is bound by HBM reads of the weights, so fewer, larger replicas keep bigger "
        "batches"
    ),
    # the network check's verdict (plan.py)
    gettext_noop("below 10 GbE: quantize or pick a smaller model before spanning nodes"),
    gettext_noop("works with care; keep TP inside nodes and PP across them"),
    gettext_noop("comfortable for PP, workable for cross-node TP"),
    # the balancer's configuration (plan.py)
    gettext_noop("least_conn, max_fails=2 fail_timeout=5s, streaming unbuffered"),
    gettext_noop("Serve proxy on every node"),
    # SLO metric names (plan.py)
    gettext_noop("inter-token latency"),
    # why a candidate is rejected (memory.py, layouts.py) or a bundle cannot be placed
    gettext_noop("weights and overheads exceed the requested memory"),
    gettext_noop("KV cache holds {kv_tokens} tokens < max_model_len {max_model_len}"),
    gettext_noop("needs {replicas} replica(s) of {gpus} GPUs; the nodes offer room for {room}"),
    gettext_noop("a bundle must fit on one node; the largest node has {gpus} free GPUs"),
    # the why of each signal (signals.py)
    gettext_noop("you said models change often"),
    gettext_noop("the model is fixed"),
    gettext_noop("several models share the GPU pool"),
    gettext_noop("one model owns these GPUs"),
    gettext_noop("Serve autoscaling follows the load; keep min_replicas ≥ 1"),
    gettext_noop("traffic is steady"),
    gettext_noop("an explicit self-healing SLO exists"),
    gettext_noop("no explicit self-healing SLO was given"),
    gettext_noop("a Ray estate already runs here and can be reused"),
    gettext_noop("no Ray cluster runs here today"),
    gettext_noop("Ray starts the workers on every node (it does not add bandwidth)"),
    gettext_noop("no replica spans nodes"),
    gettext_noop("you accept launching each node by hand"),
    gettext_noop("{nodes} fixed machine(s) serve one fixed model"),
    gettext_noop("{nodes} machines or changing models"),
    gettext_noop("fixed replicas cover steady traffic"),
    gettext_noop("traffic is {shape}"),
    gettext_noop("the existing gateway can balance the replicas"),
    gettext_noop("no gateway was declared (Nginx config is generated)"),
    gettext_noop("{dtype} weights fit one node per replica"),
    gettext_noop("the model must span nodes"),
    gettext_noop("the team has no Ray operations experience"),
    gettext_noop("the team operates Ray today"),
)

# Single words the engine uses as parameter values: link kinds, traffic shapes, pool kinds.
# A context keeps them apart from the same English elsewhere in the interface.

WORDS: dict[str, Any] = {
    "ethernet": pgettext_lazy("engine value", "ethernet"),
    "roce": pgettext_lazy("engine value", "RoCE"),
    "infiniband": pgettext_lazy("engine value", "InfiniBand"),
    "nvlink": pgettext_lazy("engine value", "NVLink"),
    "pcie": pgettext_lazy("engine value", "PCIe"),
    "none": pgettext_lazy("engine value", "none"),
    "steady": pgettext_lazy("engine value", "steady"),
    "diurnal": pgettext_lazy("engine value", "day/night"),
    "bursty": pgettext_lazy("engine value", "bursty"),
    "dedicated": pgettext_lazy("engine value", "dedicated"),
    "shared": pgettext_lazy("engine value", "shared"),
}

# Short names of the signals, for the comma-separated `signals` parameter.
SIGNAL_NAMES: dict[str, str] = {
    "sig_models_change_often": gettext_noop("models change often"),
    "sig_multi_model_pool": gettext_noop("several models share one pool"),
    "sig_traffic_swings": gettext_noop("traffic swings widely"),
    "sig_self_healing_slo": gettext_noop("a self-healing SLO"),
    "sig_ray_in_use": gettext_noop("Ray already runs here"),
    "sig_cross_node_no_nccl": gettext_noop("cross-node GPUs without hand-managed NCCL"),
    "sig_fixed_small_fleet": gettext_noop("one or two fixed machines"),
    "sig_steady_traffic": gettext_noop("steady traffic"),
    "sig_gateway_available": gettext_noop("an existing gateway"),
    "sig_quantization_fits": gettext_noop("quantization fits one node"),
    "sig_no_ray_experience": gettext_noop("no Ray operations experience"),
}


def _english() -> bool:
    return (get_language() or "en").split("-")[0] == "en"


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Return (template, anchored regex) pairs, most literal text first."""
    out = []
    for template in PHRASES:
        regex = ""
        for literal, name, _spec, _conv in string.Formatter().parse(template):
            regex += re.escape(literal)
            if name:
                regex += f"(?P<{name}>.+?)"
        out.append((template, re.compile(f"^{regex}$", re.S)))
    out.sort(key=lambda pair: -len(re.sub(r"\{\w+\}", "", pair[0])))
    return tuple(out)


def word(value: Any) -> str:
    """Return an engine value word (link kind, severity, strength, ...) in the reader's language."""
    text = str(value)
    translated = WORDS.get(text)
    return str(translated) if translated is not None and not _english() else text


def phrase(text: Any) -> str:
    """Return an engine phrase in the reader's language; unknown text is returned unchanged."""
    text = "" if text is None else str(text)
    if not text or _english():
        return text
    if text in WORDS:
        return word(text)
    for template, regex in _patterns():
        match = regex.match(text)
        if match:
            values = {k: phrase(v) for k, v in match.groupdict().items()}
            try:
                return gettext(template).format(**values)
            except (KeyError, IndexError, ValueError):
                return text
    return text


def signal_names(value: Any) -> str:
    """Return a comma-separated list of signal ids as the signals' names."""
    ids = [s.strip() for s in str(value).split(",") if s.strip()]
    names = [gettext(SIGNAL_NAMES[s]) if s in SIGNAL_NAMES else s for s in ids]
    return gettext(", ").join(names)


def localize_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Return message params with every English phrase or word translated."""
    if _english():
        return dict(params)
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key == "signals":
            out[key] = signal_names(value)
        elif isinstance(value, str):
            out[key] = phrase(value)
        else:
            out[key] = value
    return out


def recover_params(template: str, english: str) -> dict[str, str]:
    """Return the values the engine filled into `template` to write `english` ({} if it did not).

    The engine sends a pitfall's action text without all of the action's params (the image
    tag, for one); reading them back from its English lets the translation name them too.
    """
    regex = ""
    seen: set[str] = set()
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        regex += re.escape(literal)
        if name:
            regex += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
            seen.add(name)
    match = re.match(f"^{regex}$", english, re.S)
    return match.groupdict() if match else {}


# --- rule citations ---------------------------------------------------------------------------

_SOURCE = re.compile(r"^(\d{3})(?:\s+§([\d.–-]+))?$")


def rule_label(label: Any) -> str:
    """Return a DOMAIN.md rule label such as "§3 Route A" in the reader's language."""
    text = str(label)
    match = re.fullmatch(r"§(\d+)\s+Route\s+([ABC])", text.strip())
    if match:
        return gettext("§{section} Route {route}").format(
            section=match.group(1), route=match.group(2)
        )
    return text


def _split_rule(rule: Any) -> tuple[list[str], list[str]]:
    """Return (DOMAIN.md parts, article references) of "§2, §3 Route B (000 §2.2, 002 §5)"."""
    text = str(rule or "").strip()
    own, _, rest = text.partition("(")
    inner = rest.rsplit(")", 1)[0] if rest else ""
    return (
        [p.strip() for p in own.split(",") if p.strip()],
        [r.strip() for r in inner.split(",") if r.strip()],
    )


def sources(rule: Any) -> str:
    """Return the source articles a rule cites, in the reader's language ("" when none).

    "§3 Route A (000 §2, 002 §3)" gives "sources: article 000 §2, article 002 §3", in Chinese
    "依据：文章 000 第 2 节、文章 002 第 3 节".
    """
    refs = []
    for ref in _split_rule(rule)[1]:
        match = _SOURCE.match(ref)
        if not match:
            refs.append(ref)
        elif match.group(2):
            refs.append(
                gettext("article {article} §{section}").format(
                    article=match.group(1), section=match.group(2)
                )
            )
        else:
            refs.append(gettext("article {article}").format(article=match.group(1)))
    return gettext("sources: {sources}").format(sources=gettext(", ").join(refs)) if refs else ""


def cite(rule: Any) -> str:
    """Return a whole rule citation in the reader's language (English keeps the engine's form).

    "§3 Route A (000 §2, 002 §3)" reads, in Chinese,
    "DOMAIN §3 路线 A（依据：文章 000 第 2 节、文章 002 第 3 节）".
    """
    text = str(rule or "").strip()
    if not text or _english():
        return text
    own, _refs = _split_rule(text)
    rules = (
        gettext("DOMAIN {rules}").format(rules=gettext(", ").join(rule_label(p) for p in own))
        if own
        else ""
    )
    cited = sources(text)
    if not cited:
        return rules
    if not rules:
        return cited
    return gettext("{rules} ({sources})").format(rules=rules, sources=cited)


def cite_after(rule: Any) -> str:
    """Return a citation to append to a sentence: " (§3 (000 §2))" in English, translated else."""
    text = str(rule or "").strip()
    if not text:
        return ""
    return f" ({text})" if _english() else gettext(" — {citation}").format(citation=cite(text))
