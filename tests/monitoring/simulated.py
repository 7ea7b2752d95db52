"""Feed a target with polls of a simulated vLLM server, through the poller's own storage path.

No HTTP: the simulator renders /metrics and /v1/models at chosen times, the scrape package
extracts them as a poll would, and `poll_record_success` stores the result.
"""

from __future__ import annotations

from monitoring.models import Target
from monitoring.polling.run import to_datetime
from monitoring.scrape import from_text
from monitoring.scrape.served_models import served_models
from monitoring.services import PollOutcome, poll_record_success
from monitoring.simulator.vllm_sim import SimVllm, VllmProfile


def feed_simulated(
    target: Target, profile: VllmProfile, *, polls: int = 40, step_s: float = 15.0
) -> SimVllm:
    """Store `polls` polls of a simulated server, `step_s` apart, ending now."""
    sim = SimVllm(profile)
    start = sim.started
    previous = None
    for i in range(1, polls + 1):
        ts = start + i * step_s
        result = from_text(sim.metrics(ts).decode(), "vllm", previous=previous, ts=ts)
        info = dict(result.info)
        info["served_models"] = served_models(sim.models())
        poll_record_success(
            target=target,
            ts=to_datetime(ts - polls * step_s),
            outcome=PollOutcome(samples=result.samples, snapshot=None, info=info),
        )
        previous = result.raw
    target.refresh_from_db()
    return sim
