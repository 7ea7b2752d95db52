"""Login lockout, hashed API tokens, security headers and encrypted secrets."""

import pytest
from cryptography.fernet import Fernet
from django.test import Client, override_settings
from rest_framework.test import APIClient

from core import crypto
from core.models import ApiToken, hash_token_key

pytestmark = pytest.mark.django_db


@override_settings(AXES_ENABLED=True, AXES_FAILURE_LIMIT=3)
def test_repeated_wrong_passwords_lock_the_login(viewer):
    client = Client()
    for _ in range(3):
        client.post("/accounts/login/", {"username": viewer.username, "password": "wrong"})

    response = client.post(
        "/accounts/login/", {"username": viewer.username, "password": "pw-for-tests-1"}
    )

    assert response.status_code == 429
    assert b"Too many failed sign-ins" in response.content


def test_pages_forbid_inline_script_and_framing(viewer_client):
    response = viewer_client.get("/")

    csp = response["Content-Security-Policy"]
    script_src = next(d for d in csp.split(";") if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script_src
    assert "frame-ancestors 'none'" in csp
    assert response["X-Frame-Options"] == "DENY"
    assert b"<script>" not in response.content


def test_new_token_is_shown_once_and_stored_hashed(viewer_client, viewer):
    response = viewer_client.post("/accounts/tokens/", {"name": "export script"})

    token = ApiToken.objects.get(user=viewer, name="export script")
    key = response.context["new_key"]
    assert key.encode() in response.content
    assert token.key_hash == hash_token_key(key)
    assert key not in token.key_hash
    assert key.encode() not in viewer_client.get("/accounts/tokens/").content


def test_token_use_is_recorded_and_revoked_token_is_refused(viewer_client, viewer):
    token, key = ApiToken.issue(user=viewer, name="script")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert api.get("/api/v1/").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None

    viewer_client.post(f"/accounts/tokens/{token.pk}/revoke/")

    assert api.get("/api/v1/").status_code == 401


def test_user_cannot_revoke_someone_elses_token(planner_client, viewer):
    token, _ = ApiToken.issue(user=viewer, name="mine")

    response = planner_client.post(f"/accounts/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.is_active


def test_duplicate_active_token_name_is_a_field_error(viewer_client):
    viewer_client.post("/accounts/tokens/", {"name": "dup"})

    response = viewer_client.post("/accounts/tokens/", {"name": "dup"})

    assert "name" in response.context["form"].errors


@pytest.fixture
def two_keys(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old]
    crypto.reset_key_cache()
    yield old, new
    crypto.reset_key_cache()


def test_secret_survives_key_rotation(settings, two_keys):
    old, new = two_keys
    stored = crypto.encrypt("bearer-abc")

    settings.FIELD_ENCRYPTION_KEYS = [new, old]
    crypto.reset_key_cache()
    rotated = crypto.rotate(stored)
    settings.FIELD_ENCRYPTION_KEYS = [new]
    crypto.reset_key_cache()

    assert crypto.decrypt(rotated) == "bearer-abc"
    with pytest.raises(crypto.SecretUnreadable):
        crypto.decrypt(stored)
