"""The models a vLLM server says it serves (`GET /v1/models`): names and max_model_len.

Plan vs reality checks these against the plan; `vllm:cache_config_info` carries neither the
model's path nor its context length.
"""

from __future__ import annotations

import json
from typing import Any

MAX_MODELS = 20


def served_models(body: bytes) -> list[dict[str, Any]]:
    """Return [{"id", "root", "max_model_len"}] from a /v1/models answer; [] when unreadable."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return []
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return []
    out: list[dict[str, Any]] = []
    for entry in entries[:MAX_MODELS]:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        length = entry.get("max_model_len")
        out.append(
            {
                "id": entry["id"][:300],
                "root": str(entry.get("root") or "")[:300],
                "max_model_len": length if isinstance(length, int) and length > 0 else None,
            }
        )
    return out
