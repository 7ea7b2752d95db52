"""Issue 15 item 5: lockouts behind a proxy, password spraying, the first admin's password,
password change and admin-issued reset links."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings

from core.models import ApiToken

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"


def _login(client: Client, username: str, password: str, client_ip: str):
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=f"{client_ip}, {PROXY}" if client_ip != PROXY else client_ip,
    )


@override_settings(AXES_ENABLED=True, AXES_FAILURE_LIMIT=3, TRUSTED_PROXIES=["10.0.0.0/24"])
def test_an_attacker_behind_the_proxy_does_not_lock_out_other_clients(viewer):
    for _ in range(5):
        _login(Client(), viewer.username, "wrong", client_ip="203.0.113.9")

    victim = _login(Client(), viewer.username, "pw-for-tests-1", client_ip="198.51.100.7")
    attacker = _login(Client(), viewer.username, "pw-for-tests-1", client_ip="203.0.113.9")

    assert victim.status_code == 302
    assert attacker.status_code == 429


@override_settings(AXES_ENABLED=True, AXES_FAILURE_LIMIT=3, TRUSTED_PROXIES=[])
def test_forwarded_for_from_an_untrusted_peer_is_ignored(viewer):
    for n in range(4):  # a new spoofed address each time: still one client
        Client().post(
            "/accounts/login/",
            {"username": viewer.username, "password": "wrong"},
            REMOTE_ADDR="203.0.113.9",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{n}",
        )

    response = Client().post(
        "/accounts/login/",
        {"username": viewer.username, "password": "pw-for-tests-1"},
        REMOTE_ADDR="203.0.113.9",
        HTTP_X_FORWARDED_FOR="192.0.2.99",
    )

    assert response.status_code == 429


@override_settings(AXES_ENABLED=True, LOGIN_IP_FAILURE_LIMIT=5, TRUSTED_PROXIES=["10.0.0.0/24"])
def test_password_spraying_from_one_address_is_stopped(viewer):
    users = get_user_model()
    for n in range(6):
        users.objects.create_user(username=f"user-{n}", password="pw-for-tests-1")
        _login(Client(), f"user-{n}", "Summer2026!", client_ip="203.0.113.9")

    sprayer = _login(Client(), viewer.username, "pw-for-tests-1", client_ip="203.0.113.9")
    other = _login(Client(), viewer.username, "pw-for-tests-1", client_ip="198.51.100.7")

    assert sprayer.status_code == 429
    assert other.status_code == 302


def test_the_first_admin_must_change_the_generated_password(capsys):
    call_command("ensure_admin")
    password = capsys.readouterr().out.split("password: ")[1].split()[0]
    client = Client()

    assert client.login(username="admin", password=password)
    assert client.get("/")["Location"].startswith("/accounts/password/")
    assert client.get("/inventory/").status_code == 302

    changed = client.post(
        "/accounts/password/",
        {
            "old_password": password,
            "new_password1": "a-new-long-passphrase-7",
            "new_password2": "a-new-long-passphrase-7",
        },
    )

    assert changed.status_code == 302
    assert client.get("/").status_code == 200


def test_changing_the_password_revokes_api_tokens(viewer, viewer_client):
    token, _ = ApiToken.issue(user=viewer, name="script")

    response = viewer_client.post(
        "/accounts/password/",
        {
            "old_password": "pw-for-tests-1",
            "new_password1": "a-new-long-passphrase-7",
            "new_password2": "a-new-long-passphrase-7",
        },
    )

    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_an_admin_issues_a_reset_link_that_sets_a_new_password(admin_client_, viewer):
    response = admin_client_.post(f"/accounts/users/{viewer.pk}/reset-link/")

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    link = response.context["reset_link"]
    client = Client()
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200
    done = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a-new-long-passphrase-7", "new_password2": "a-new-long-passphrase-7"},
    )
    assert done.status_code == 302
    assert Client().login(username=viewer.username, password="a-new-long-passphrase-7")


def test_only_admins_issue_reset_links(planner_client, viewer):
    assert planner_client.post(f"/accounts/users/{viewer.pk}/reset-link/").status_code == 403
