"""Template filters that show the engine's English phrases and rule citations translated.

{% load engine_i18n %} then {{ reason.rule|cite }}, {{ reason.rule|cite_sources }},
{{ ref.label|rule_label }},
{{ bundle.reason|engine_phrase }}, {{ link_kind|engine_word }}.
"""

from typing import Any

from django import template

from planner import engine_texts_i18n as i18n

register = template.Library()


@register.filter
def cite(rule: Any) -> str:
    """Return a rule citation ("§3 Route A (000 §2)") in the reader's language."""
    return i18n.cite(rule)


@register.filter
def cite_sources(rule: Any) -> str:
    """Return the source articles a rule cites ("sources: article 000 §2"), translated."""
    return i18n.sources(rule)


@register.filter
def rule_label(label: Any) -> str:
    """Return a DOMAIN.md rule label ("§3 Route A") in the reader's language."""
    return i18n.rule_label(label)


@register.filter
def engine_phrase(text: Any) -> str:
    """Return a phrase the engine wrote in English in the reader's language."""
    return i18n.phrase(text)


@register.filter
def engine_word(value: Any) -> str:
    """Return an engine value word (link kind, traffic shape) in the reader's language."""
    return i18n.word(value)
