"""Every page and endpoint needs a signed-in user; writes need the planner role."""

import pytest
from django.contrib.auth.models import Group

pytestmark = pytest.mark.django_db


def test_anonymous_page_request_redirects_to_login(client):
    response = client.get("/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_anonymous_api_request_is_refused_without_redirect(client):
    response = client.get("/api/v1/")

    assert response.status_code in (401, 403)


def test_signed_in_viewer_sees_home_with_navigation(viewer_client):
    response = viewer_client.get("/")

    assert response.status_code == 200
    for label in (b"Inventory", b"Plan", b"Decisions", b"Monitoring", b"API docs"):
        assert label in response.content


def test_login_page_is_styled_like_the_rest(client):
    response = client.get("/accounts/login/")

    assert response.status_code == 200
    assert b"css/app.css" in response.content


def test_token_authenticates_scripts(planner_token_api):
    response = planner_token_api.get("/api/v1/")

    assert response.status_code == 200
    assert "schema" in response.json()


def test_role_groups_exist_with_model_permissions():
    names = set(Group.objects.values_list("name", flat=True))

    assert {"viewer", "planner", "admin"} <= names
    viewer = Group.objects.get(name="viewer")
    assert all(p.codename.startswith("view_") for p in viewer.permissions.all())


def test_swagger_ui_uses_local_assets(viewer_client):
    response = viewer_client.get("/api/v1/docs/")

    assert response.status_code == 200
    assert b"cdn" not in response.content.lower()


def test_openapi_schema_generates(viewer_client):
    response = viewer_client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
