"""What a vLLM poll reads besides /metrics: the models the server says it serves."""

from __future__ import annotations

import httpx

from .errors import ScrapeError
from .fetch import FetchPolicy, fetch
from .result import ScrapeResult
from .served_models import served_models


def read_served_models(
    metrics: str,
    policy: FetchPolicy,
    token: str | None,
    client: httpx.Client | None,
    result: ScrapeResult,
) -> None:
    """Add what /v1/models says to the result's info; its failure only costs a warning."""
    url = metrics.rsplit("/metrics", 1)[0] + "/v1/models"
    try:
        models = served_models(fetch(url, policy=policy, token=token, client=client).body)
    except ScrapeError as exc:
        result.warnings.append(f"/v1/models: {exc}")
        return
    if models:
        result.info["served_models"] = models
