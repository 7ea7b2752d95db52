"""The interface language: Accept-Language first, then the user's remembered choice."""

import pytest

pytestmark = pytest.mark.django_db


def test_accept_language_is_respected_on_first_visit(client):
    response = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")

    assert response["Content-Language"] == "zh-hans"


def test_language_choice_is_remembered_for_the_user(viewer_client, viewer, client):
    viewer_client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})

    # A new browser (no cookie, English Accept-Language) still gets the saved choice.
    client.force_login(viewer)
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="en")

    assert response["Content-Language"] == "zh-hans"


def test_unknown_language_is_not_saved(viewer_client, viewer):
    viewer_client.post("/i18n/setlang/", {"language": "xx", "next": "/"})

    assert not hasattr(viewer, "preference") or viewer.preference.language != "xx"
