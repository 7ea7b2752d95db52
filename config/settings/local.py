"""Settings for a developer's laptop: `make run`."""

from config.env import env
from config.settings.base import *  # noqa: F403
from config.settings.base import VAR_DIR

DEBUG = env.bool("DEBUG", default=True)


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
# machines and the admin's allowlist (monitoring.reach).
MONITORING_ALLOW_LOOPBACK = True
