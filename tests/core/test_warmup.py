"""A web worker builds at start what the first requests would otherwise pay for."""

import pytest
from django.template import engines

from core.warmup import TEMPLATES, warm_up
from planner.engine.result import validator


@pytest.mark.django_db
def test_warm_up_builds_the_validator_and_finds_every_common_template():
    validator.cache_clear()

    warm_up()

    assert validator.cache_info().currsize == 1
    for name in TEMPLATES:  # each exists (a renamed template must be renamed here too)
        assert engines["django"].engine.find_template(name)


def test_the_wsgi_application_warms_up(monkeypatch):
    import importlib
    import sys

    import core.warmup

    calls = []
    monkeypatch.setattr(core.warmup, "warm_up", lambda: calls.append(1))
    sys.modules.pop("config.wsgi", None)
    importlib.import_module("config.wsgi")
    assert calls == [1]
