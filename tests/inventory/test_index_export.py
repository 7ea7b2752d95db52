"""The inventory's Export card offers two links, never a raw address that spills past its
border (issue 30 item 8)."""

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_export_card_links_csv_and_yaml_without_printing_an_address(viewer_client):
    page = viewer_client.get(reverse("inventory:index")).content.decode()
    card = re.search(r'data-testid="export-tile">(.*?)</div>', page, re.S).group(1)

    assert f'href="{reverse("inventory:machine-export", args=["csv"])}"' in card
    assert f'href="{reverse("inventory:machine-export", args=["yaml"])}"' in card
    assert "<code>" not in card
    text = re.sub(r"<[^>]+>", "", card)
    assert "/inventory/" not in text
