"""What a web worker does once at start, so that no user's request pays for it.

A gunicorn worker imports its views lazily (Django reads the URLconf at the first request),
builds the plan result's validator at the first plan read and compiles each template at its
first render: measured in the load benchmark, the first plan page of each of the four workers
took about 1.2 s against 24 ms for the next ones, which alone was the page's p95 under 50 users.

The apps say what to warm up (register_warm_up in their AppConfig.ready): the ground floor
imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.template.loader import get_template
from django.urls import get_resolver

# The pages nearly every user opens first: compiled here rather than at a user's request.
TEMPLATES: list[str] = []
# What else the first request would build (the plan result's validator).
CALLS: list[Callable[[], object]] = []


def register_warm_up(
    *, call: Callable[[], object] | None = None, templates: Iterable[str] = ()
) -> None:
    """Have every web worker run `call` and compile `templates` at start."""
    if call is not None and call not in CALLS:
        CALLS.append(call)
    TEMPLATES.extend(name for name in templates if name not in TEMPLATES)


def warm_up() -> None:
    """Import every view, run what the apps registered and compile the common pages."""
    get_resolver().url_patterns  # noqa: B018 - imports the URLconf and so every view
    for call in CALLS:
        call()
    for name in TEMPLATES:
        get_template(name)
