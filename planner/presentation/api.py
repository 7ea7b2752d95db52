"""The result as the API returns it: the stored contract, each message with its English text
beside its code and parameters (clients may read either; `from_dict` ignores the text).

Each candidate's speed is its `prediction`, the serving model's figures with their bands, the
same numbers the page and the Markdown show. The stored contract keeps the closed-form figures
the engine ranks on (`output_throughput_tok_s`, `ttft_ms`, `itl_ms`): they rank, and no page
shows them."""

from __future__ import annotations

from typing import Any

from planner.engine.messages import Message
from planner.engine.result import Candidate, Placement, PlanResult
from planner.presentation.messages import english_action, english_text
from planner.presentation.shown import shown_speed


def _message(message: Message | None, *, with_action: bool = False) -> dict[str, Any] | None:
    if message is None:
        return None
    out = {**message.to_json(), "text": english_text(message)}
    if with_action:
        out["action"] = english_action(message)
    return out


def _prediction(c: Candidate | None, result: PlanResult) -> dict[str, Any] | None:
    speed = shown_speed(c, result)
    return speed.to_json() if speed is not None else None


def _candidate(c: Candidate, stored: dict[str, Any], result: PlanResult) -> dict[str, Any]:
    """Return a candidate with its one shown `prediction` (the serving model's, with bands; null
    when it does not fit or was not simulated). The stored contract stays whole, so that
    `from_dict` reads the answer back: its closed-form speed fields are the ranking estimate."""
    out = {
        **stored,
        "prediction": _prediction(c, result),
        "rejected_reason": _message(c.rejected_reason),
        "placement_reason": _message(c.placement_reason),
        "placement_hint": _message(c.placement_hint),
    }
    if c.serving is not None:
        out["serving"] = {
            **stored["serving"],
            "step_backend_notice": _message(c.serving.step_backend_notice),
        }
    return out


def _placement(p: Placement, stored: dict[str, Any]) -> dict[str, Any]:
    single = {**stored["single_bundle"], "reason": _message(p.single_bundle.reason)}
    out = {**stored, "single_bundle": single}
    if p.pinned is not None:
        out["pinned"] = _placement(p.pinned, stored["pinned"])
    return out


def api_result(result: PlanResult) -> dict[str, Any]:
    """Return the result as JSON, every message with its English `text` (and `action`)."""
    out = result.to_dict()
    rec = result.recommendation
    out["recommendation"] = {
        **out["recommendation"],
        "summary": _message(rec.summary),
        "prediction": _prediction(result.best, result),
        "reasons": [_message(m) for m in rec.reasons],
    }
    out["signals"] = [
        {**stored, "message": _message(s.message)}
        for s, stored in zip(result.signals, out["signals"], strict=True)
    ]
    out["pitfalls"] = [
        {**stored, "message": _message(p.message, with_action=True)}
        for p, stored in zip(result.pitfalls, out["pitfalls"], strict=True)
    ]
    out["candidates"] = [
        _candidate(c, stored, result)
        for c, stored in zip(result.candidates, out["candidates"], strict=True)
    ]
    if result.pinned is not None:
        out["pinned"] = _candidate(result.pinned, out["pinned"], result)
    out["placement"] = _placement(result.placement, out["placement"])
    return out
