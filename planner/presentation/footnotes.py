"""Sources as footnotes: each reason carries small numbered links, the rules it follows and the
public pages behind them are listed once below (no citation interrupts a sentence)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from planner.presentation.messages import Shown
from planner.presentation.references import PublicRef, references
from planner.presentation.rules import rule_heading
from planner.presentation.template_types import Rule


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    number: int
    anchor: str  # on the rules page
    label: str  # "§3 Route A", in the reader's language
    heading: str  # "The three routes", without its section number
    refs: tuple[PublicRef, ...]  # the public pages and papers a reader can open


@dataclass(frozen=True, slots=True, kw_only=True)
class Footnoted:
    text: str
    numbers: tuple[int, ...]


def footnoted(messages: Iterable[Shown]) -> tuple[list[Footnoted], list[Source]]:
    """Return each message with the numbers of its sources, and the sources numbered once."""
    sources: dict[tuple[str, str], Source] = {}
    out = []
    for m in messages:
        numbers = []
        for ref in m.rules:
            key = (ref.anchor, "")
            if key not in sources:
                rule = Rule(ref.anchor)
                sources[key] = Source(
                    number=len(sources) + 1,
                    anchor=ref.anchor,
                    label=ref.label,
                    heading=rule_heading(rule),
                    refs=references(rule),
                )
            numbers.append(sources[key].number)
        out.append(Footnoted(text=m.text, numbers=tuple(dict.fromkeys(numbers))))
    return out, list(sources.values())
