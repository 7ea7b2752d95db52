"""Worker liveness tasks."""

import socket

from celery import shared_task
from django.utils import timezone

from core.models import WorkerHeartbeat


@shared_task(name="core.heartbeat", ignore_result=True, acks_late=False)
def heartbeat() -> None:
    """Record that a worker is alive; /healthz reads the age of the newest beat."""
    WorkerHeartbeat.objects.update_or_create(
        worker=socket.gethostname(), defaults={"beat_at": timezone.now()}
    )


@shared_task(name="core.ping", ignore_result=False)
def ping() -> str:
    """Answer "pong" with the worker's host name: the broker round-trip check."""
    return f"pong from {socket.gethostname()}"
