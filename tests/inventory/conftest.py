"""Fixtures of the inventory tests."""

import json
from pathlib import Path

import pytest

CATALOG_MODELS = Path(__file__).resolve().parents[2] / "catalog" / "models"


def catalog_config(slug: str) -> dict:
    """Return the real config.json shipped in the catalog for `slug`."""
    return json.loads((CATALOG_MODELS / f"{slug}.json").read_text())["config"]


@pytest.fixture
def catalog_loaded(db):
    from inventory.services import catalog_load

    return catalog_load()
