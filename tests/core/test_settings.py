"""Production settings are safe and refuse to start half-configured (issue 15 items 8, 9:
encryption keys at startup, the container health check, /metrics behind its token)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[2]


def _production_run(argv: list[str], **env_overrides: str) -> subprocess.CompletedProcess[str]:
    """Run `argv` (after `python`) with production settings, as a deployment would."""
    # A deployment has none of these; browser tests set the async one for their own process.
    unset = (
        "SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "FIELD_ENCRYPTION_KEYS",
        "METRICS_TOKEN",
        "DJANGO_ALLOW_ASYNC_UNSAFE",
    )
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.production", **env_overrides)
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _manage(*args: str, **env_overrides: str) -> subprocess.CompletedProcess[str]:
    return _production_run(["manage.py", *args], **env_overrides)


def test_production_refuses_to_start_without_secret_key():
    result = _manage("check")

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_check_deploy_passes_with_production_settings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY="x" * 20 + "-production-grade-secret-key-with-entropy-" + "y" * 20,
        ALLOWED_HOSTS="serveplan.example.internal",
        FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
    )

    assert result.returncode == 0, result.stdout + result.stderr


SECRET = "x" * 20 + "-production-grade-secret-key-with-entropy-" + "y" * 20


def _production(code: str, tmp_path: Path, **env_overrides: str) -> subprocess.CompletedProcess:
    """Run `code` after django.setup() under production settings (no database server)."""
    env = {
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "serveplan.example.internal",
        "SERVEPLAN_VAR_DIR": str(tmp_path),
        **env_overrides,
    }
    return _production_run(["-c", "import django; django.setup()\n" + code], **env)


def test_production_refuses_to_start_without_field_encryption_keys(tmp_path):
    result = _production("", tmp_path)

    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS" in result.stderr
    assert "generate_key" in result.stderr


def test_production_refuses_a_field_encryption_key_that_is_not_a_fernet_key(tmp_path):
    result = _production("", tmp_path, FIELD_ENCRYPTION_KEYS="not-a-key")

    assert result.returncode != 0
    assert "not a Fernet key" in result.stderr


HEALTHCHECK_PROBE = """
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)
from core.healthcheck import probe_headers
response = Client().get("/healthz", **probe_headers())
print(response.status_code, response.get("Content-Type"))
"""


def test_the_container_health_check_reaches_healthz_under_production_settings(tmp_path):
    result = _production(
        HEALTHCHECK_PROBE, tmp_path, FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode()
    )

    assert result.returncode == 0, result.stderr[-2000:]
    status, content_type = result.stdout.split()[-2:]
    # 503 here: no worker in this test. Not a redirect, not DisallowedHost.
    assert status in ("200", "503")
    assert content_type == "application/json"


def test_a_plain_http_probe_of_healthz_is_not_redirected(tmp_path):
    code = """
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)
response = Client().get("/healthz", HTTP_HOST="serveplan.example.internal")
print(response.status_code)
"""
    result = _production(code, tmp_path, FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode())

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] in ("200", "503")


@pytest.mark.django_db
@override_settings(METRICS_TOKEN="", METRICS_REQUIRE_TOKEN=True)
def test_metrics_without_a_configured_token_are_refused_in_production(client):
    response = client.get("/metrics")

    assert response.status_code == 403
    assert b"METRICS_TOKEN" in response.content


@pytest.mark.django_db
@override_settings(METRICS_TOKEN="s3cret", METRICS_REQUIRE_TOKEN=True)
def test_metrics_with_the_token_are_served_in_production(client):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_production_settings_require_the_metrics_token_setting(tmp_path):
    code = "from django.conf import settings; print(json.dumps(settings.METRICS_REQUIRE_TOKEN))"
    result = _production(
        "import json\n" + code, tmp_path, FIELD_ENCRYPTION_KEYS=Fernet.generate_key().decode()
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.split()[-1]) is True
