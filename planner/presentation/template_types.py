"""The shape of a message template: its English text, the action of a pitfall, the short name
of a signal, and the rules and sources it cites."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Rule(StrEnum):
    """A DOMAIN.md section, by its anchor on the rules page."""

    WORDS = "rule-1"
    NUMBERS = "rule-2"
    ROUTES = "rule-3"
    ROUTE_A = "rule-3-route-a"
    ROUTE_B = "rule-3-route-b"
    ROUTE_C = "rule-3-route-c"
    SIGNALS = "rule-4"
    PLACEMENT = "rule-5"
    PITFALLS = "rule-6"
    RECORD = "rule-7"
    SCENARIOS = "rule-8"


@dataclass(frozen=True, slots=True)
class Article:
    """A source article of DOMAIN.md (../shared/seeds/), optionally one of its sections."""

    number: str
    section: str = ""


@dataclass(frozen=True, slots=True)
class Issue:
    """An issue of this project that settled a rule."""

    number: int


@dataclass(frozen=True, slots=True)
class Template:
    text: str
    action: str = ""  # a pitfall's: what to do about it
    name: str = ""  # a signal's short name, in lists of the signals that hit
    rules: tuple[Rule, ...] = ()
    sources: tuple[Article | Issue, ...] = ()
    translated: bool = True  # False: the text is shown as stored (legacy English)
    plural: str = ""  # the English plural of `text`, chosen by the parameter named `count`
    count: str = ""


def counted(
    forms: tuple[str, str],
    count: str,
    *,
    rules: tuple[Rule, ...] = (),
    sources: tuple[Article | Issue, ...] = (),
) -> Template:
    """Return a template with a singular and a plural form (NP_), chosen by param `count`."""
    return Template(forms[0], plural=forms[1], count=count, rules=rules, sources=sources)


def memory_rule(text: str) -> Template:
    """Return the template of a sentence on vLLM's memory profiling (issue 13's figures)."""
    return Template(text, rules=(Rule.NUMBERS,), sources=(Issue(13),))


def speed_rule(text: str) -> Template:
    """Return the template of a sentence on the vLLM engine the speeds follow (issue 32)."""
    return Template(text, rules=(Rule.NUMBERS,), sources=(Issue(32),))
