"""A pool plan's result as the API returns it: the stored contract, each message with its
English text beside its code and parameters (as for single-model plans)."""

from __future__ import annotations

from typing import Any

from planner.engine.messages import Message
from planner.engine.pool.result import PoolResult
from planner.presentation.messages import english_text


def _message(message: Message) -> dict[str, Any]:
    return {**message.to_json(), "text": english_text(message)}


def pool_api_result(result: PoolResult) -> dict[str, Any]:
    """Return the stored result with every message's English text."""
    out = result.to_dict()
    out["gpus_used"] = result.gpus_used
    out["unplaced"] = [
        {**stored, "reason": _message(m.reason), "hints": [_message(h) for h in m.hints]}
        for stored, m in zip(out["unplaced"], result.unplaced, strict=True)
    ]
    out["route"]["reasons"] = [_message(r) for r in result.route.reasons]
    return out
