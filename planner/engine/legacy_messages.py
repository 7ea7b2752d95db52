"""Messages saved before they were codes (result schema 1-4), read back as codes.

Those engines stored each reason, signal and pitfall as {id, rule, params, text[, action]},
with English phrases inside the params (a signal's why, a verdict, a runner-up note) and words
(link kinds, traffic shapes), the summary and the rejected reasons as English. Here an id whose
parameters are complete becomes its code; a phrase stays the English it was (Code.LEGACY), so
does a message whose parameters were never stored (the image tag of a pitfall's action).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.engine.messages import Code, Message, MessageError, Param, Term, legacy, message

# Parameters that held English phrases, those that held words, and flag values (never grouped).
_OLD_PHRASES = frozenset({"why", "verdict", "runner_up_note", "balancer_config", "reason"})
_OLD_WORDS = frozenset({"link_kind", "shape", "pool_kind"})
_OLD_METRICS = {"TTFT": Term.TTFT, "inter-token latency": Term.ITL}
_OLD_FLAGS = frozenset({"max_num_batched_tokens"})


def _old_param(name: str, value: Any) -> Param:
    if name == "signals" and isinstance(value, str):
        return tuple(Code(s.strip()) for s in value.split(",") if s.strip())
    if name in _OLD_PHRASES and isinstance(value, str):
        return legacy(value)
    if name in _OLD_WORDS and value in set(Term):
        return Term(value)
    if name == "metric" and isinstance(value, str):
        return _OLD_METRICS.get(value) or legacy(value)
    if name in _OLD_FLAGS and isinstance(value, int):
        return str(value)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise MessageError(f"{name}: {value!r:.40}")
    return value


def _old_message(old: Any, *, pitfall: bool = False) -> dict[str, Any]:
    """Return a message stored as {id, rule, params, text[, action]} as a code with parameters;
    English it cannot read as one (unknown id, missing parameters) is kept as it was."""
    if not isinstance(old, Mapping) or "code" in old:
        return dict(old) if isinstance(old, Mapping) else legacy(str(old)).to_json()
    params = old.get("params") or {}
    try:
        return message(
            str(old.get("id")), **{k: _old_param(k, v) for k, v in params.items()}
        ).to_json()
    except (ValueError, TypeError):
        text = str(old.get("text") or old.get("id") or "")
    rule = str(old.get("rule") or "")
    if pitfall:
        action = str(old.get("action") or "")
        return Message(
            Code.LEGACY_PITFALL, {"text": text, "action": action, "rule": rule}
        ).to_json()
    return legacy(text, rule).to_json()


def _old_reason(text: Any) -> dict[str, Any] | None:
    if isinstance(text, Mapping):
        return dict(text)
    return legacy(str(text)).to_json() if text else None


def _old_placement(placement: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(placement)
    single = out.get("single_bundle")
    if isinstance(single, Mapping):
        out["single_bundle"] = {**single, "reason": _old_reason(single.get("reason"))}
    return out


def _old_candidate(c: Any) -> Any:
    if not isinstance(c, Mapping):
        return c
    return {**c, "rejected_reason": _old_reason(c.get("rejected_reason"))}


def upgrade_messages(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return a stored result of schema version 4 or earlier with its messages as codes.

    Reasons, signals and pitfalls stored {id, rule, params, text}; their parameters held English
    phrases (a signal's why, a verdict) and words (link kinds). Those read back as codes where
    the id and parameters are complete, phrases as the English they were; the summary and the
    rejected reasons as English too.
    """
    out = dict(data)
    rec = dict(out.get("recommendation") or {})
    rec["reasons"] = [_old_message(m) for m in rec.get("reasons") or []]
    rec["summary"] = _old_reason(rec.get("summary")) or legacy("").to_json()
    out["recommendation"] = rec
    out["signals"] = [
        {
            "message": _old_message(s),
            **{k: s[k] for k in ("direction", "strength", "hit") if k in s},
        }
        for s in out.get("signals") or []
    ]
    out["pitfalls"] = [
        {"message": _old_message(p, pitfall=True), "severity": p.get("severity")}
        for p in out.get("pitfalls") or []
    ]
    out["candidates"] = [_old_candidate(c) for c in out.get("candidates") or []]
    if out.get("pinned"):
        out["pinned"] = _old_candidate(out["pinned"])
    placement = dict(out.get("placement") or {})
    if isinstance(placement.get("pinned"), Mapping):
        placement["pinned"] = _old_placement(placement["pinned"])
    out["placement"] = _old_placement(placement)
    return out
