"""Production settings: gunicorn + separate worker and beat + PostgreSQL + Redis."""

from config.env import env, require, require_fernet_keys
from config.settings.base import *  # noqa: F403

DEBUG = False
SECRET_KEY = require("SECRET_KEY")
# In production stored secrets need their own keys: rotating SECRET_KEY must not lose them.
# Refuse to start without them, rather than fail the first time someone saves a target token.
FIELD_ENCRYPTION_FALLBACK_TO_SECRET_KEY = False
FIELD_ENCRYPTION_KEYS = require_fernet_keys("FIELD_ENCRYPTION_KEYS")
# ServePlan's own /metrics is served only with a bearer token (METRICS_TOKEN) here.
METRICS_REQUIRE_TOKEN = True
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Load balancers and the container health check probe over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# ServePlan usually runs on internal host names, which the browsers' preload list cannot hold;
# preloading is an irreversible opt-in, so its check is silenced unless the operator opts in.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"
