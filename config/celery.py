"""The Celery application. Broker and schedule come from Django settings (CELERY_*)."""

import os

from celery import Celery
from celery.signals import worker_ready

from config import kombu_redis_fix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
kombu_redis_fix.install()

app = Celery("serveplan")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Load benchmarks hold a worker for minutes: their own queue (and worker), so polls never wait.
app.conf.task_routes = {"benchmarks.*": {"queue": "benchmarks"}}

# Static entries; django-celery-beat's DatabaseScheduler copies them into its tables on start,
# where operators can change intervals from the admin. `expires` is for celery's own scheduler;
# django-celery-beat reads only `expire_seconds`.
app.conf.beat_schedule = {
    "core.heartbeat": {
        "task": "core.heartbeat",
        "schedule": 30.0,
        "options": {"expires": 25, "expire_seconds": 25},
    },
    "monitoring.schedule_polls": {
        "task": "monitoring.schedule_polls",
        "schedule": 5.0,
        "options": {"expires": 4, "expire_seconds": 4},
    },
    "monitoring.maintain": {
        "task": "monitoring.maintain",
        "schedule": 60.0,
        "options": {"expires": 55, "expire_seconds": 55},
    },
    "benchmarks.end_stale_runs": {
        "task": "benchmarks.end_stale_runs",
        "schedule": 60.0,
        "options": {"expires": 55, "expire_seconds": 55, "queue": "celery"},
    },
}


@worker_ready.connect
def _beat_once_on_start(sender: object = None, **kwargs: object) -> None:
    """Record a heartbeat as soon as a worker is up, so /healthz need not wait 30 s."""
    app.send_task("core.heartbeat")
