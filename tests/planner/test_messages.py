"""The engine's messages: one template per code, rendered by one renderer in every language."""

import string

import pytest
from django.utils import translation

from planner.engine.messages import SIGNATURES, Code, Message, Term, legacy, message
from planner.presentation.messages import (
    action,
    citation,
    english_text,
    message_key,
    rules_of,
    shown,
    text,
)
from planner.presentation.rules import RULES
from planner.presentation.template_types import Rule
from planner.presentation.templates import TEMPLATES, TERMS


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", list(Code))
def test_every_code_has_one_template_using_exactly_its_parameters(code):
    template = TEMPLATES[code]
    # English an earlier engine saved keeps the rule it cited beside it, shown as written.
    cited = {"rule"} if code in (Code.LEGACY, Code.LEGACY_PITFALL) else set()
    assert _fields(template.text) | _fields(template.action) | cited == set(SIGNATURES[code])


def test_every_term_and_rule_is_written_down():
    assert set(TERMS) == set(Term)
    assert set(RULES) == set(Rule)
    signals = [c for c in Code if c.startswith("sig_")]
    assert all(TEMPLATES[c].name for c in signals)
    assert all(TEMPLATES[c].action for c in Code if c.startswith("pit_"))


def _link(kind: Term) -> Message:
    return message(
        Code.NETWORK_CHECK,
        link_gbps=25.0,
        link_kind=kind,
        effective_gbs=2.81,
        verdict=message(Code.LINK_WITH_CARE),
    )


def test_english_fills_numbers_words_phrases_and_signal_names():
    ray = message(
        Code.RAY_ROUTE_C,
        hits=2,
        signals=(Code.SIG_MULTI_MODEL_POOL, Code.SIG_RAY_IN_USE),
        gpus_per_replica=4,
    )
    assert english_text(ray) == (
        "Ray Serve is recommended: 2 signals for Ray hit (several models share one pool, Ray "
        "already runs here); Serve autoscaling with min_replicas ≥ 1 and num_gpus = TP×PP = 4."
    )
    link = _link(Term.ROCE)
    assert english_text(link) == (
        "Cross-node link is 25 Gb/s RoCE (≈2.81 GB/s effective): works with care; keep TP "
        "inside nodes and PP across them."
    )
    assert english_text(message(Code.NOTHING_FITS, max_model_len=131072)).startswith(
        "No layout on the offered hardware starts this model at 131,072 tokens"
    )


def test_chinese_translates_the_template_and_everything_inside_it():
    link = _link(Term.ETHERNET)
    with translation.override("zh-hans"):
        rendered = text(link)
    assert "25 Gb/s" in rendered
    assert "ethernet" not in rendered  # the word is translated too
    assert "works with care" not in rendered  # and the nested phrase
    assert rendered != english_text(link)


def test_a_pitfall_renders_its_action_from_the_same_parameters():
    pin = message(Code.PIT_PIN_VERSIONS, image="vllm/vllm-openai:v0.32.0")
    with translation.override("en"):
        assert text(pin) == "Unpinned images drift between nodes."
        assert action(pin) == "Pin the image tag (vllm/vllm-openai:v0.32.0) on every node."
    with translation.override("zh-hans"):
        assert "vllm/vllm-openai:v0.32.0" in action(pin)


def test_english_an_earlier_engine_saved_is_shown_as_it_was():
    old = legacy("Chose 2 of 2 node(s).", "§3 (000 §2)")
    with translation.override("zh-hans"):
        assert text(old) == "Chose 2 of 2 node(s)."
    assert rules_of(old) == ()
    assert citation(old) == "§3 (000 §2)"
    assert message_key(old) != message_key(legacy("Something else."))


def test_rules_are_cited_by_anchor_with_their_sources():
    reason = message(Code.PP_OVER_CROSS_TP, tp=4, pp=2, cross_tp=8, pp_comm_ms=0.1, tp_comm_ms=9)
    with translation.override("en"):
        shown_reason = shown(reason)
        assert [r.anchor for r in shown_reason.rules] == ["rule-1", "rule-3-route-b"]
        assert [r.label for r in shown_reason.rules] == ["§1", "§3 Route B"]
        # Cited by what a reader can open: the public pages behind the rules, no project notes.
        assert shown_reason.sources.startswith("https://docs.vllm.ai/en/latest/serving/")
        assert "arxiv.org/abs/1909.08053" in shown_reason.sources
        assert citation(reason).startswith("see Words, Route B: one instance across nodes: https")
        assert "DOMAIN" not in citation(reason)
        assert "article" not in citation(reason)


def test_a_message_reads_back_from_its_stored_form():
    nested = message(
        Code.PINNED_LAYOUT,
        tp=2,
        pp=1,
        replicas=2,
        verdict=message(Code.PINNED_NO_FIT, reason=message(Code.REJECT_MEMORY)),
        throughput_tok_s=0.0,
        best_tok_s=3146.0,
        score=0.0,
        best_score=100.0,
    )
    assert Message.from_json(nested.to_json()) == nested


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [(1, "1 machine or changing models"), (3, "3 machines or changing models")],
)
def test_a_fleet_count_reads_singular_or_plural(nodes, expected):
    why = message(Code.WHY_FLEET_OR_CHANGING, nodes=nodes)
    assert english_text(why) == expected
    with translation.override("zh-hans"):
        assert text(why) == f"{nodes} 台机器，或模型会变化"
