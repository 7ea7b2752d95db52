"""What a web worker does once at start, so that no user's request pays for it.

A gunicorn worker imports its views lazily (Django reads the URLconf at the first request),
builds the plan result's validator at the first plan read and compiles each template at its
first render: measured in the load benchmark, the first plan page of each of the four workers
took about 1.2 s against 24 ms for the next ones, which alone was the page's p95 under 50 users.
"""

from __future__ import annotations

from django.template.loader import get_template
from django.urls import get_resolver

# The pages nearly every user opens first: compiled here rather than at a user's request.
TEMPLATES = (
    "planner/plan_detail.html",
    "planner/partials/result.html",
    "monitoring/overview.html",
    "monitoring/target_detail.html",
)


def warm_up() -> None:
    """Import every view, build the plan result's validator and compile the common pages."""
    from planner.engine.result import validator

    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and so every view
    validator()
    for name in TEMPLATES:
        get_template(name)
