"""Issue 33 item 8: a window whose exporter gave a latency no server measures (histogram buckets
at le="1e-320") is refused with a 400-ready message naming the target, not a 500."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitoring.reality import calibration
from monitoring.selectors import resolve_range
from tests.monitoring.test_plan_comparison import _replica, s1_plan, two_replicas  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_latency_of_1e_320_seconds_is_refused_naming_the_target(two_replicas, monkeypatch):  # noqa: F811
    real_polls = calibration._polls

    def tiny_itl(series):
        return [(running, 1e-320 * 1000.0, ttft) for running, _itl, ttft in real_polls(series)]

    monkeypatch.setattr(calibration, "_polls", tiny_itl)
    start, end = resolve_range("1h")

    with pytest.raises(ValidationError) as caught:
        calibration.calibration_run(targets=list(two_replicas), start=start, end=end)

    message = caught.value.message_dict["window"][0]
    assert two_replicas[0].name in message or two_replicas[1].name in message
    assert "itl_ms" in message
