"""The one label of each route and executor backend, in the reader's language: pages, filters,
the admin, decision records and the database's choices (planner.models.Route,
planner.decisions.models.ExecutorBackend) all name them from here, keyed by the engine's enums.
It stands below both the models and the presentation (which reads saved plans through the
models)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy

from planner.engine.result import Backend, Route

ROUTE_TITLES: dict[Route, Any] = {
    Route.SINGLE: gettext_lazy("One vLLM server"),
    Route.A: gettext_lazy("Route A: replicas inside nodes behind a balancer"),
    Route.B: gettext_lazy("Route B: one instance across nodes"),
    Route.C: gettext_lazy("Route C: a Ray Serve pool"),
    Route.NONE: gettext_lazy("Nothing fits"),
}

BACKEND_TITLES: dict[Backend, Any] = {
    Backend.MP: gettext_lazy("mp (multiprocessing)"),
    Backend.RAY: gettext_lazy("ray (Ray actors)"),
}
