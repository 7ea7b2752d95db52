"""Settings for the test suite. DATABASE_URL and REDIS_URL are honoured when set (CI)."""

from config.settings.base import *  # noqa: F403
from config.settings.base import VAR_DIR

SECRET_KEY = "test-only-secret-key-not-for-production"  # noqa: S105
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Unit tests never need a broker; integration tests start real workers with their own URL.
CELERY_BROKER_URL = "memory://"
CELERY_RESULT_BACKEND = None
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# `prepare` collects static files; tests never touch the ones `make run` serves.
STATIC_ROOT = VAR_DIR / "test-staticfiles"

# Lockout is tested explicitly (tests/core/test_security.py); elsewhere tests log in freely.
AXES_ENABLED = False
# So is the plan evaluation rate limit (tests/security/test_plan_cost_limits.py).
PLAN_EVALUATION_RATE = ""
# And the series API's (tests/monitoring/test_series_limits.py).
MONITORING_SERIES_RATE = ""

# Per-process and emptied between tests (tests/conftest.py), so no answer leaks across tests.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Tests' fake servers and the simulator listen on loopback (production: monitoring.targets.reach).
MONITORING_ALLOW_LOOPBACK = True
