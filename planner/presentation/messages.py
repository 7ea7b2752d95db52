"""The one renderer of the engine's messages (codes with parameters, planner/engine/messages.py).

`text` and `action` render for readers: the template of planner/presentation/templates.py in
the active language (gettext), numbers in its locale, nested phrases and words translated too.
Pages, the Markdown export and the decision prefill use them. `english_text` and
`english_action` render the same templates untranslated, for the API. `shown` adds what a page
shows beside the text: the rules cited, the sources, severity and strength labels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext, pgettext
from django.utils.translation import gettext_lazy as _

from planner.engine.messages import Code, Message, Param, Term
from planner.engine.result import Pitfall, Signal
from planner.presentation.rules import RuleRef, citation_text, rule_ref, sources_text
from planner.presentation.template_types import Template
from planner.presentation.templates import TEMPLATES, TERM_CONTEXT, TERMS

_LEGACY = (Code.LEGACY, Code.LEGACY_PITFALL)
SEVERITY_LABELS: dict[str, Any] = {
    "high": _("high"),
    "medium": _("medium"),
    "low": _("low"),
    "info": _("info"),
}
STRENGTH_LABELS: dict[str, Any] = {
    "low": _("low"),
    "medium": _("medium"),
    "medium-high": _("medium-high"),
    "high": _("high"),
}


def _decimals(value: float) -> int:
    """Return the decimals the engine kept (it rounds), at most 3; none for a whole number."""
    fraction = f"{abs(value):.3f}".rstrip("0").partition(".")[2]
    return len(fraction)


def _number(value: float, *, english: bool) -> str:
    decimals = _decimals(value)
    if english:
        return f"{value:,.{decimals}f}"
    return number_format(round(value, decimals), decimal_pos=decimals, force_grouping=True)


# Parameters that count sequences: shown whole, rounded down (182.4 fit means 182 do).
WHOLE_SEQUENCES = frozenset(
    {"max_concurrency", "max_concurrency_total", "single_node_concurrency", "span_concurrency"}
)


def _value(value: Param, *, english: bool) -> str:
    if isinstance(value, Message):
        return _render(value, action=False, english=english)
    if isinstance(value, Term):
        word = TERMS[value]
        return word if english else pgettext(TERM_CONTEXT, word)
    if isinstance(value, tuple):
        names = [TEMPLATES[code].name or code.value for code in value]
        if english:
            return ", ".join(names)
        return gettext(", ").join(gettext(n) for n in names)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number(value, english=english)
    return str(value)


def _render(message: Message, *, action: bool, english: bool) -> str:
    template = TEMPLATES[message.code]
    source = template.action if action else template.text
    if not source:
        return ""
    values = {
        k: _value(_whole(v) if k in WHOLE_SEQUENCES else v, english=english)
        for k, v in message.params.items()
    }
    if template.plural and not action:
        english_form = _plural_form(template, message, translate=False)
        translate = not english and template.translated
        wording = _plural_form(template, message, translate=True) if translate else english_form
        return _format(wording, english_form, values)
    wording = source if english or not template.translated else gettext(source)
    return _format(wording, source, values)


def _whole(value: Param) -> Param:
    if isinstance(value, float):
        return math.floor(value + 1e-9)
    return value


def _plural_form(template: Template, message: Message, *, translate: bool) -> str:
    """Return the template's singular or plural form for its count, translated if asked."""
    count = message.params.get(template.count, 1)
    n = int(count) if isinstance(count, int | float) and not isinstance(count, bool) else 1
    if translate:
        return ngettext(template.text, template.plural, n)
    return template.text if n == 1 else template.plural


def _format(wording: str, source: str, values: dict[str, str]) -> str:
    try:
        return wording.format(**values)
    except (KeyError, IndexError, ValueError):
        # A translation that lost a placeholder (the catalog tests refuse one): English.
        return source.format(**values)


def text(message: Message | None) -> str:
    """Return the message in the reader's language ("" for no message)."""
    return "" if message is None else _render(message, action=False, english=False)


def action(message: Message) -> str:
    """Return a pitfall's action in the reader's language ("" when the code has none)."""
    return _render(message, action=True, english=False)


def english_text(message: Message) -> str:
    """Return the message in English (the API's `text`)."""
    return _render(message, action=False, english=True)


def english_action(message: Message) -> str:
    """Return a pitfall's action in English (the API's `action`)."""
    return _render(message, action=True, english=True)


def rules_of(message: Message) -> tuple[RuleRef, ...]:
    """Return the DOMAIN.md rules a message cites (none for English an old engine saved)."""
    return tuple(rule_ref(r) for r in TEMPLATES[message.code].rules)


def sources_of(message: Message) -> str:
    """Return the public pages behind the rules a message cites ("" if none)."""
    return sources_text(TEMPLATES[message.code].rules)


def citation(message: Message) -> str:
    """Return the whole citation of a message, to follow it in running text ("" if none)."""
    if message.code in _LEGACY:
        return str(message.params.get("rule", ""))  # as the earlier engine wrote it
    template = TEMPLATES[message.code]
    return citation_text(template.rules)


def with_citation(message: Message) -> str:
    """Return the message's text followed by its citation (Markdown export, decision prefill)."""
    cited = citation(message)
    return text(message) + (gettext(" — {citation}").format(citation=cited) if cited else "")


def message_key(message: Message) -> str:
    """Return what tells messages apart across plans: the code, or the English an old engine
    saved (several of those share the legacy code)."""
    if message.code in _LEGACY:
        return f"{message.code}:{message.params.get('text', '')}"
    return message.code.value


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """A message ready for a page: its text and action translated, the rules it cites."""

    code: Code
    text: str
    action: str
    rules: tuple[RuleRef, ...]
    sources: str
    severity: str = ""
    strength: str = ""
    direction: str = ""
    hit: bool | None = None

    @property
    def severity_label(self) -> str:
        return str(SEVERITY_LABELS.get(self.severity, self.severity))

    @property
    def strength_label(self) -> str:
        return str(STRENGTH_LABELS.get(self.strength, self.strength))


def shown(item: Message | Signal | Pitfall) -> Shown:
    """Return a reason, signal or pitfall as a page shows it, in the reader's language."""
    message = item if isinstance(item, Message) else item.message
    extra: dict[str, Any] = {}
    if isinstance(item, Signal):
        extra = {"strength": item.strength, "direction": item.direction, "hit": item.hit}
    elif isinstance(item, Pitfall):
        extra = {"severity": item.severity}
    return Shown(
        code=message.code,
        text=text(message),
        action=action(message),
        rules=rules_of(message),
        sources=sources_of(message),
        **extra,
    )


def shown_all(items: Iterable[Message | Signal | Pitfall]) -> list[Shown]:
    """Return every item shown."""
    return [shown(item) for item in items]
