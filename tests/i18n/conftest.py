"""Fixtures of the i18n tests: a pseudo-locale compiled at test time, sample objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf.locale import LANG_INFO
from django.test import override_settings
from django.utils import translation

from tests.i18n.pseudo import PSEUDO_CODE, build_pseudo_catalog


@pytest.fixture
def pseudo_locale(tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Activate-able pseudo language: LANGUAGES + LOCALE_PATHS overridden (caches reset)."""
    locale_dir = tmp_path / "locale"
    build_pseudo_catalog(locale_dir)
    monkeypatch.setitem(
        LANG_INFO,
        PSEUDO_CODE,
        {"bidi": False, "code": PSEUDO_CODE, "name": "Pseudo", "name_local": "⟦Pseudo⟧"},
    )
    languages = [*settings.LANGUAGES, (PSEUDO_CODE, "Pseudo")]
    # Our pseudo catalog first, so it wins over Django's and the apps' own catalogs.
    with override_settings(LANGUAGES=languages, LOCALE_PATHS=[locale_dir, *settings.LOCALE_PATHS]):
        assert translation.check_for_language(PSEUDO_CODE), "pseudo catalog not found"
        yield PSEUDO_CODE
