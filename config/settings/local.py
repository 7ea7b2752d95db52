"""Settings for a developer's laptop: `make run`."""

from config.env import env
from config.settings.base import *  # noqa: F403
from config.settings.base import VAR_DIR

# Off unless DEBUG=true: `make run` shows the product's own 404 and 500 pages, not Django's
# debug pages (which list every URL and setting).
DEBUG = env.bool("DEBUG", default=False)
# WhiteNoise also serves files added since the last collectstatic (prepare runs it at start).
WHITENOISE_USE_FINDERS = True


def _local_secret_key() -> str:
    """Return a per-checkout secret key kept under var/, created on first use."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        from django.core.management.utils import get_random_secret_key

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(get_random_secret_key())
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env.str("SECRET_KEY", default="") or _local_secret_key()

# The simulator (`make run`) listens on loopback; production reaches only the inventory's
# machines and the admin's allowlist (monitoring.targets.reach).
MONITORING_ALLOW_LOOPBACK = True
