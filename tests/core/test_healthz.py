"""/healthz names what is wrong and answers 503 until everything is fine."""

import pytest
from django.utils import timezone

from config.celery import app as celery_app
from core.models import WorkerHeartbeat
from core.tasks import heartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture
def fresh_heartbeat():
    """Beat now; return when, so an age can be bounded without a wall-clock guess."""
    before = timezone.now()
    heartbeat()
    return before


def test_healthz_needs_no_login_and_reports_every_part(client, fresh_heartbeat):
    response = client.get("/healthz")

    body = response.json()
    assert response.status_code == 200, body
    assert body["database"] == "ok"
    assert body["broker"] == "ok"
    # No older than the time since the beat (a busy machine may take seconds to get here).
    since_beat_s = (timezone.now() - fresh_heartbeat).total_seconds()
    assert 0 <= body["worker_heartbeat_age_s"] <= since_beat_s + 0.5
    assert body["version"]


def test_healthz_is_503_without_any_heartbeat(client):
    response = client.get("/healthz")

    assert response.status_code == 503
    assert any(p.startswith("worker:") for p in response.json()["problems"])


def test_healthz_is_503_when_the_heartbeat_is_stale(client, settings):
    WorkerHeartbeat.objects.create(
        worker="old", beat_at=timezone.now() - timezone.timedelta(minutes=10)
    )

    response = client.get("/healthz")

    assert response.status_code == 503
    assert "last heartbeat" in " ".join(response.json()["problems"])


def test_healthz_names_the_broker_when_it_is_unreachable(client, fresh_heartbeat, monkeypatch):
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    monkeypatch.setattr(celery_app.conf, "broker_url", "redis://127.0.0.1:1/0")

    response = client.get("/healthz")

    body = response.json()
    assert response.status_code == 503
    assert body["broker"].startswith("error")
    assert any(p.startswith("broker:") for p in body["problems"])


def test_healthz_is_503_naming_migrate_when_the_tables_are_missing(client, monkeypatch):
    from django.db import ProgrammingError

    from core import health

    def missing_table(*args, **kwargs):
        raise ProgrammingError('relation "core_workerheartbeat" does not exist')

    monkeypatch.setattr(health.WorkerHeartbeat.objects, "exists", missing_table)

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["database"].startswith("error: tables missing, run `manage.py migrate`")
