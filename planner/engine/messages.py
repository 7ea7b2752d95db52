"""What the engine says: codes with typed parameters, never English sentences.

A message is a `Code` and its parameters. The English template of each code, its translation
and the DOMAIN.md rules it cites live once, in planner/presentation/templates.py; this module
only says which parameters each code takes (`SIGNATURES`), so that the engine cannot emit a
message a template cannot render, and an earlier engine's saved message can be told apart.

Parameter values are typed: numbers (formatted for the reader), plain strings shown verbatim
(host names, GPU slugs, dtypes, layouts), `Term`s (words the reader's language translates),
nested `Message`s (a phrase such as the why of a signal) and tuples of codes (the signals that
hit, shown by their names).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from planner.engine.message_codes import N_, NC_, NP_, Code, Term
from planner.engine.message_signatures import SIGNATURES

# Code, Term, SIGNATURES and the translation markers live in their own modules; importers name
# them from here, beside Message.
__all__ = [
    "NC_",
    "NP_",
    "N_",
    "SIGNATURES",
    "Code",
    "Message",
    "MessageError",
    "Param",
    "Term",
    "legacy",
    "message",
]

Param = Union[int, float, str, Term, "Message", tuple[Code, ...]]


class MessageError(ValueError):
    """A message whose parameters are not those of its code."""


@dataclass(frozen=True, slots=True)
class Message:
    """One thing the engine says: a code and the values of its parameters."""

    code: Code
    params: Mapping[str, Param] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the stored form: {"code": ..., "params": {...}} (nested values tagged)."""
        return {"code": self.code.value, "params": {k: _encode(v) for k, v in self.params.items()}}

    @classmethod
    def from_json(cls, data: Any) -> Message:
        """Return the message a `to_json` dict describes (a Message is returned as it is)."""
        if isinstance(data, Message):
            return data
        if not isinstance(data, Mapping) or "code" not in data:
            raise MessageError(f"a message is an object with a code, not {data!r:.60}")
        try:
            code = Code(data["code"])
        except ValueError:
            raise MessageError(f"unknown message code {data['code']!r}") from None
        params = data.get("params") or {}
        if not isinstance(params, Mapping):
            raise MessageError(f"{code}: params must be an object")
        return message(code, **{str(k): _decode(v) for k, v in params.items()})

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        # PlanResult.from_dict validates with pydantic: a message reads through from_json.
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(cls.from_json)


def message(code: Code | str, **params: Param) -> Message:
    """Return the message `code` with `params`; refuse parameters its code does not take."""
    code = Code(code)
    want = set(SIGNATURES[code])
    if set(params) != want:
        missing, extra = sorted(want - set(params)), sorted(set(params) - want)
        raise MessageError(f"{code}: missing parameters {missing}, unexpected {extra}")
    return Message(code, params)


def legacy(text: str, rule: str = "") -> Message:
    """Return English an earlier engine wrote, kept as it was, with the rule it cited."""
    return Message(Code.LEGACY, {"text": text, "rule": rule})


def _encode(value: Param) -> Any:
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, Term):
        return {"term": value.value}
    if isinstance(value, tuple):
        return {"codes": [c.value for c in value]}
    return value


def _decode(value: Any) -> Param:
    if isinstance(value, Mapping):
        if "term" in value:
            return Term(value["term"])
        if "codes" in value:
            return tuple(Code(c) for c in value["codes"])
        return Message.from_json(value)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise MessageError(f"a message parameter cannot be {value!r:.60}")
    return value
