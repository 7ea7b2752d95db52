"""The one label of each route, in the reader's language: pages, filters, the admin, decision
records and the database's choices (planner.models.Route) all name a route from here. It stands
below both the models and the presentation (which reads saved plans through the models)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy

from planner.engine.result import Route

ROUTE_TITLES: dict[Route, Any] = {
    Route.SINGLE: gettext_lazy("One vLLM server"),
    Route.A: gettext_lazy("Route A: replicas inside nodes behind a balancer"),
    Route.B: gettext_lazy("Route B: one instance across nodes"),
    Route.C: gettext_lazy("Route C: a Ray Serve pool"),
    Route.NONE: gettext_lazy("Nothing fits"),
}
