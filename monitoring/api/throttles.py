"""Per-user rate limit on the series API: each read can cost the time-series server seconds of
CPU (a read-only target's series are PromQL range queries)."""

from django.conf import settings
from rest_framework.throttling import UserRateThrottle


class SeriesThrottle(UserRateThrottle):
    """MONITORING_SERIES_RATE (e.g. "60/min") per signed-in user, shared by every web worker;
    read from the settings on each request, like planner.throttles.PlanEvaluationThrottle."""

    scope = "monitoring-series"

    def get_rate(self) -> str | None:
        return settings.MONITORING_SERIES_RATE or None
