"""Settings shared by every environment. Values come from environment variables (config.env)."""

from datetime import timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _
from whitenoise.compress import Compressor

from config.env import BASE_DIR, env

try:
    SERVEPLAN_VERSION = version("serveplan")
except PackageNotFoundError:  # running from a bare checkout
    SERVEPLAN_VERSION = "0.0.0+local"

VAR_DIR = Path(env.str("SERVEPLAN_VAR_DIR", default=str(BASE_DIR / "var")))

SECRET_KEY = env.str("SECRET_KEY", default="")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "simple_history",
    "axes",
    "core",
    "inventory",
    "planner",
    "planner.decisions",
    "monitoring",
    "benchmarks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.middleware.PagesRequireLoginMiddleware",
    "core.accounts.PasswordChangeRequiredMiddleware",
    "core.middleware.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: it turns a lockout raised during login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.roles",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'serveplan.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The default laptop setup has web and worker writing one file: take the write lock at
    # BEGIN (no lock-upgrade deadlocks) and wait for it. WAL mode, which lets readers proceed
    # during a write, is switched on once by `manage.py prepare` (it persists in the file;
    # switching it on every connection makes concurrent connections fail).
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        **DATABASES["default"].get("OPTIONS", {}),
    }
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
# Check a reused connection before the request uses it: after a database restart the first
# request of each web worker would otherwise fail.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling: lock a user name + address pair after repeated failures.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Reverse proxies (addresses or networks) whose X-Forwarded-For is believed; from anyone else
# the header is ignored and the peer address is the client (core.client_ip). Behind the
# documented nginx, list its address, e.g. TRUSTED_PROXIES=127.0.0.1 or 172.18.0.0/16.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
AXES_CLIENT_IP_CALLABLE = "core.client_ip.client_ip"
# Password spraying: failed sign-ins from one client address, whatever the user names
# (core.login_guard); the address is refused for LOGIN_LOCKOUT_MINUTES after the last one.
LOGIN_IP_FAILURE_LIMIT = env.int("LOGIN_IP_FAILURE_LIMIT", default=30)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
# No inline script anywhere: pages load their JS from /static/ and pass data via data-* or
# json_script. Plotly injects <style> elements, so styles (only) may be inline.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "worker-src": [CSP.SELF, "blob:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}

# Monitoring (docs/monitoring.md lists them; monitoring/conf.py derives each poll's limits).
# Seconds one computation of the fleet-wide sums serves every user's dashboard.
MONITORING_FLEET_SERIES_CACHE_S = env.int("MONITORING_FLEET_SERIES_CACHE_S", default=5)
# Base port of the built-in metrics simulator (`make run` picks a free one when unset).
SIMULATOR_PORT = env.int("SIMULATOR_PORT", default=9400)
# Poll interval of a new target in seconds (its bounds are the model's: monitoring.models).
MONITORING_DEFAULT_POLL_INTERVAL_S = env.int("MONITORING_DEFAULT_POLL_INTERVAL_S", default=15)
# Fetch limits of one poll (the total never exceeds 0.8 of the poll interval).
MONITORING_CONNECT_TIMEOUT_S = env.float("MONITORING_CONNECT_TIMEOUT_S", default=3.0)
MONITORING_TOTAL_TIMEOUT_S = env.float("MONITORING_TOTAL_TIMEOUT_S", default=10.0)
MONITORING_MAX_RESPONSE_BYTES = env.int("MONITORING_MAX_RESPONSE_BYTES", default=10 * 1024 * 1024)
# CIDRs and host names reachable besides the inventory's machines and the admin's allowlist
# (monitoring.targets.reach); cloud metadata addresses are refused whatever is listed.
MONITORING_URL_ALLOWLIST = env.list("MONITORING_URL_ALLOWLIST", default=[])
# Loopback reachable: local and test settings only (the simulator listens there).
MONITORING_ALLOW_LOOPBACK = False
# Load benchmarks (benchmarks/): hard caps on what one run may send (a 400 names the field).
BENCHMARK_MAX_REQUESTS = env.int("BENCHMARK_MAX_REQUESTS", default=2000)  # per level
BENCHMARK_MAX_DURATION_S = env.int("BENCHMARK_MAX_DURATION_S", default=1800)  # whole run
BENCHMARK_MAX_CONCURRENCY = env.int("BENCHMARK_MAX_CONCURRENCY", default=256)
BENCHMARK_MAX_PROMPT_TOKENS = env.int("BENCHMARK_MAX_PROMPT_TOKENS", default=32768)
BENCHMARK_MAX_OUTPUT_TOKENS = env.int("BENCHMARK_MAX_OUTPUT_TOKENS", default=8192)
BENCHMARK_MAX_LEVELS = env.int("BENCHMARK_MAX_LEVELS", default=8)
# A running benchmark reports progress every second; one silent this long lost its worker.
BENCHMARK_STALE_AFTER_S = env.int("BENCHMARK_STALE_AFTER_S", default=300)
# Per-target scrape limits (Prometheus' names; 0 switches one off) and discovery's cap.
MONITORING_SAMPLE_LIMIT = env.int("MONITORING_SAMPLE_LIMIT", default=50_000)
MONITORING_LABEL_LIMIT = env.int("MONITORING_LABEL_LIMIT", default=64)
MONITORING_LABEL_NAME_LENGTH_LIMIT = env.int("MONITORING_LABEL_NAME_LENGTH_LIMIT", default=256)
MONITORING_LABEL_VALUE_LENGTH_LIMIT = env.int("MONITORING_LABEL_VALUE_LENGTH_LIMIT", default=2048)
MONITORING_MAX_EXPORTERS = env.int("MONITORING_MAX_EXPORTERS", default=64)
# Where samples live: "embedded" (this database) or "prometheus" (a Prometheus-compatible
# server: remote write to MONITORING_REMOTE_WRITE_URL, PromQL reads from MONITORING_PROMETHEUS_URL).
MONITORING_SERIES_STORE = env.str("MONITORING_SERIES_STORE", default="embedded")
MONITORING_PROMETHEUS_URL = env.str("MONITORING_PROMETHEUS_URL", default="")
MONITORING_REMOTE_WRITE_URL = env.str("MONITORING_REMOTE_WRITE_URL", default="")
# Samples spooled in the database (all workers together) while the remote-write server is down.
MONITORING_REMOTE_WRITE_BUFFER_SAMPLES = env.int(
    "MONITORING_REMOTE_WRITE_BUFFER_SAMPLES", default=1_000_000
)
MONITORING_PROMETHEUS_TIMEOUT_S = env.float("MONITORING_PROMETHEUS_TIMEOUT_S", default=5.0)
# Retention, and how much one rollup or clean-up run may do.
MONITORING_RAW_RETENTION_H = env.int("MONITORING_RAW_RETENTION_H", default=48)
MONITORING_ROLLUP_RETENTION_D = env.int("MONITORING_ROLLUP_RETENTION_D", default=30)
MONITORING_RETENTION_BATCH_ROWS = env.int("MONITORING_RETENTION_BATCH_ROWS", default=5_000)
MONITORING_RETENTION_MAX_BATCHES = env.int("MONITORING_RETENTION_MAX_BATCHES", default=20)
MONITORING_ROLLUP_MAX_MINUTES_PER_RUN = env.int("MONITORING_ROLLUP_MAX_MINUTES_PER_RUN", default=30)
MONITORING_ROLLUP_MAX_ROWS_PER_RUN = env.int("MONITORING_ROLLUP_MAX_ROWS_PER_RUN", default=500_000)
# PostgreSQL: hourly sample partitions made this many hours ahead by the maintenance task.
MONITORING_SAMPLE_PARTITIONS_AHEAD_H = env.int("MONITORING_SAMPLE_PARTITIONS_AHEAD_H", default=6)
# Ranges up to this many hours are answered from raw samples, longer ones from one-minute
# rollups (and raw samples after the rollup cursor): an hour of 200 targets' raw samples is 240
# polls per series, its rollups 60 rows.
MONITORING_RAW_QUERY_MAX_H = env.float("MONITORING_RAW_QUERY_MAX_H", default=0.25)
MONITORING_MAX_POINTS_PER_SERIES = env.int("MONITORING_MAX_POINTS_PER_SERIES", default=1000)
# One series request may ask for at most this many points in all (series x max_points): a
# dashboard's 40 series at the default 1,000 points each fit.
MONITORING_SERIES_MAX_POINTS_PER_REQUEST = env.int(
    "MONITORING_SERIES_MAX_POINTS_PER_REQUEST", default=40_000
)
# Series API requests (a target's series, fleet series) each user may make; "" switches the
# limit off. An open dashboard asks every 15 s.
MONITORING_SERIES_RATE = env.str("MONITORING_SERIES_RATE", default="60/min")
# A read-only target's rates look back at most this far at each step (or four scrape intervals
# when longer): a 7-day chart must not make Prometheus scan a whole bucket at every step.
MONITORING_READONLY_RATE_WINDOW_MAX_S = env.int(
    "MONITORING_READONLY_RATE_WINDOW_MAX_S", default=300
)
# Default TTFT p95 threshold of a new alert rule (a linked decision's threshold wins).
MONITORING_DEFAULT_TTFT_P95_THRESHOLD_S = env.float(
    "MONITORING_DEFAULT_TTFT_P95_THRESHOLD_S", default=2.0
)
# Polls of suspect targets (hung, over limits) running at once, across all workers.
MONITORING_SUSPECT_POLL_SLOTS = env.int("MONITORING_SUSPECT_POLL_SLOTS", default=1)
# /healthz says "degraded" when the most overdue target waits longer than this.
MONITORING_LAG_DEGRADED_S = env.float("MONITORING_LAG_DEGRADED_S", default=60.0)
# Timeout of one webhook delivery.
MONITORING_WEBHOOK_TIMEOUT_S = env.float("MONITORING_WEBHOOK_TIMEOUT_S", default=5.0)

# Lists of ids in API bodies (a target's machines) hold at most this many items.
API_MAX_IDS_PER_LIST = env.int("API_MAX_IDS_PER_LIST", default=1000)
# A calibration fit takes at most this many targets.
MONITORING_CALIBRATION_MAX_TARGETS = env.int("MONITORING_CALIBRATION_MAX_TARGETS", default=100)

# Plan evaluations (evaluate, save, re-run) each user may run; "" switches the limit off.
PLAN_EVALUATION_RATE = env.str("PLAN_EVALUATION_RATE", default="30/min")

# When set, GET /metrics (ServePlan's own Prometheus metrics) requires "Bearer <token>".
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# Production settings set this: without METRICS_TOKEN, /metrics then answers 403.
METRICS_REQUIRE_TOKEN = False

# Stored secrets are encrypted with these Fernet keys (newest first); see core/crypto.py.
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEYS", default=[])
FIELD_ENCRYPTION_FALLBACK_TO_SECRET_KEY = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Our overrides of Django's per-locale formats (config/formats/zh_Hans: thousands grouped by ",").
FORMAT_MODULE_PATH = ["config.formats"]
# Off: Django would then group every number a template prints, ids and years included. Figures
# for readers are formatted with grouping on purpose (planner/presentation/numbers.py).
USE_THOUSAND_SEPARATOR = False
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed names (cached for a year by browsers) and gzip + Brotli copies served by WhiteNoise:
# plotly.js goes over the wire as ~0.4 MB instead of 1.5 MB. `collectstatic` builds them
# (`manage.py prepare` for `make run`, the deploy step in docs/production.md).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Only the hashed names are kept and compressed (every page asks for those), and source maps are
# not compressed (only developer tools fetch them): collectstatic does a third of the work.
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (
    *Compressor.SKIP_COMPRESS_EXTENSIONS,
    "map",
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so that unauthenticated API calls get 401 with WWW-Authenticate.
        "core.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.ReadAnyWritePlanner"],
    # DRF's JSON parser with a nesting-depth guard (a 100,000-deep body was a 500).
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    # Capped ?limit= (schemathesis: an unbounded one reached SQL as an out-of-range integer).
    "DEFAULT_PAGINATION_CLASS": "core.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "ServePlan API",
    "DESCRIPTION": (
        "Inventory, deployment plans, decision records and live metrics for vLLM on your own GPUs."
    ),
    "VERSION": SERVEPLAN_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and Swagger UI describe the fleet's API: signed-in users only, like the rest.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Several models have a "kind" or "source" with different choices: name each enum.
    "ENUM_NAME_OVERRIDES": {
        "PoolKindEnum": "inventory.models.hardware.PoolKind",
        "NicKindEnum": "inventory.models.hardware.NicKind",
        "TargetKindEnum": "monitoring.models.TargetKind",
        "ResponsibilityKindEnum": "planner.decisions.guidance.ResponsibilityKind",
        "EvidenceKindEnum": "planner.decisions.guidance.EvidenceKind",
        "EvidenceSourceEnum": "planner.decisions.models.EvidenceSource",
    },
}

# Celery. Without REDIS_URL the broker is kombu's filesystem transport under var/, so the
# one-command run needs no server process; production and CI set REDIS_URL.
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_DATA_DIR = VAR_DIR / "celery"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {"visibility_timeout": 3600}
    # Results are read only by the round-trip check (core.ping); every other task ignores them.
    CELERY_RESULT_BACKEND = REDIS_URL
else:
    CELERY_BROKER_URL = "filesystem://"
    # kombu's transport, with each message renamed into place once written (a worker could
    # read a half-written one and stop; see the module).
    CELERY_BROKER_TRANSPORT = "config.filesystem_broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_DATA_DIR / "queue"),
        "data_folder_out": str(CELERY_DATA_DIR / "queue"),
        "processed_folder": str(CELERY_DATA_DIR / "processed"),
        # Broadcast exchanges (worker control); kombu's default is "control" in the cwd.
        "control_folder": str(CELERY_DATA_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = None
    for _folder in ("queue", "control"):
        (CELERY_DATA_DIR / _folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# When the broker connection drops, cancel the acks_late tasks still running instead of acking
# them later on the dead channel (kombu's Redis transport then crashes the worker). Polls are
# idempotent, so the redelivered ones write nothing twice.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# One cache shared by every web worker: Redis when there is one, else a folder under var/.
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    )
}

HEARTBEAT_INTERVAL_S = 30
# /healthz reports the worker unhealthy when its last beat is older than this.
HEARTBEAT_MAX_AGE_S = env.int("HEARTBEAT_MAX_AGE_S", default=120)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}
