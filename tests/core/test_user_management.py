"""Issue 15 item 9: admins manage users and see/revoke anyone's API tokens; tokens expire;
the page that shows a new key is never cached."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from core.audit import audit_entries
from core.models import ApiToken

pytestmark = pytest.mark.django_db


def test_admin_adds_a_user_with_a_role_and_gets_a_reset_link(admin_client_):
    response = admin_client_.post(
        "/accounts/users/", {"username": "nina", "email": "", "role": "planner"}
    )

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    assert "/accounts/reset/" in response.context["reset_link"]
    nina = get_user_model().objects.get(username="nina")
    assert not nina.has_usable_password()
    assert list(nina.groups.values_list("name", flat=True)) == ["planner"]


def test_admin_changes_a_role_on_the_user_page_and_it_is_audited(admin_client_, admin_user, viewer):
    response = admin_client_.post(
        f"/accounts/users/{viewer.pk}/", {"role": "admin", "is_active": "on"}
    )

    assert response.status_code == 302
    assert list(viewer.groups.values_list("name", flat=True)) == ["admin"]
    reasons = [r["history_change_reason"] for r in audit_entries(source_keys=["auth.user"])]
    assert "role: viewer → admin" in reasons


def test_admin_cannot_demote_themselves(admin_client_, admin_user):
    response = admin_client_.post(f"/accounts/users/{admin_user.pk}/", {"role": "viewer"})

    assert response.status_code == 400
    assert list(admin_user.groups.values_list("name", flat=True)) == ["admin"]


def test_disabling_a_user_revokes_their_tokens(admin_client_, viewer):
    token, _ = ApiToken.issue(user=viewer, name="script")

    admin_client_.post(f"/accounts/users/{viewer.pk}/", {"role": "viewer"})

    token.refresh_from_db()
    viewer.refresh_from_db()
    assert not viewer.is_active
    assert token.revoked_at is not None


def test_admin_sees_and_revokes_another_users_token(admin_client_, viewer):
    token, _ = ApiToken.issue(user=viewer, name="viewer-script")

    page = admin_client_.get(f"/accounts/users/{viewer.pk}/")
    assert "viewer-script" in page.content.decode()
    response = admin_client_.post(f"/accounts/tokens/{token.pk}/revoke/")

    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_an_expired_token_is_refused(viewer):
    token, key = ApiToken.issue(user=viewer, name="short", valid_for=timedelta(days=7))
    ApiToken.objects.filter(pk=token.pk).update(expires_at=token.created_at - timedelta(seconds=1))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.get("/api/v1/").status_code == 401
    ApiToken.issue(user=viewer, name="short")  # the name is free again


def test_new_token_page_is_not_cached_and_sets_an_expiry(viewer_client, viewer):
    response = viewer_client.post("/accounts/tokens/", {"name": "ci", "expires_in": "30"})

    assert response["Cache-Control"] == "no-store"
    token = ApiToken.objects.get(user=viewer, name="ci")
    assert token.expires_at - token.created_at == timedelta(days=30)
