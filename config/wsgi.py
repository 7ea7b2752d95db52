"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

application = get_wsgi_application()

from core.warmup import warm_up  # noqa: E402 - needs the application (Django set up)

warm_up()
