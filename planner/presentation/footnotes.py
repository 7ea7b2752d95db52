"""Sources as footnotes: each reason carries small numbered links, the rules and articles they
cite are listed once below ("DOMAIN §3 sources: article 000 §2" no longer interrupts a sentence)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from planner.presentation.messages import Shown


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    number: int
    anchor: str  # on the rules page
    label: str  # "§3 Route A", in the reader's language
    heading: str
    articles: str  # "sources: article 000 §2, article 002 §3", in the reader's language


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
            key = (ref.anchor, m.sources)
            if key not in sources:
                sources[key] = Source(
                    number=len(sources) + 1,
                    anchor=ref.anchor,
                    label=ref.label,
                    heading=ref.heading,
                    articles=m.sources,
                )
            numbers.append(sources[key].number)
        out.append(Footnoted(text=m.text, numbers=tuple(dict.fromkeys(numbers))))
    return out, list(sources.values())
