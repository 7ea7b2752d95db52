"""Every Django app of ServePlan has one layout: `api` (a package or module) for the REST API,
`services` for writes and `selectors` for reads (a package or module each)."""

import importlib.util

import pytest
from django.apps import apps


def _our_apps() -> list[str]:
    return sorted(
        config.name
        for config in apps.get_app_configs()
        if config.name.split(".")[0] in {"core", "inventory", "monitoring", "planner"}
    )


def test_the_apps_are_found():
    assert {"core", "inventory", "monitoring", "planner", "planner.decisions"} <= set(_our_apps())


@pytest.mark.parametrize("app", _our_apps())
@pytest.mark.parametrize("part", ["api", "services", "selectors"])
def test_every_app_has_the_same_layout(app, part):
    assert importlib.util.find_spec(f"{app}.{part}") is not None, f"{app} has no {part}"
