"""The one place where settings read the environment.

Every value ServePlan reads from the environment goes through `env` (django-environ) or
`require`, which fails loudly, naming the variable, when a required value is missing.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


def require(name: str) -> str:
    """Return the environment variable `name`, or refuse to start without it."""
    value = env.str(name, default="")
    if not value:
        raise ImproperlyConfigured(
            f"The environment variable {name} is required by these settings but is not set."
        )
    return value


def require_fernet_keys(name: str) -> list[str]:
    """Return the comma-separated Fernet keys in `name`, or refuse to start (missing or bad)."""
    keys = [key.strip() for key in env.list(name, default=[]) if key.strip()]
    if not keys:
        raise ImproperlyConfigured(
            f"The environment variable {name} is required by these settings: stored secrets "
            "(monitoring target tokens, webhook secrets) are encrypted with it. Generate a key "
            'with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())"'
        )
    from cryptography.fernet import Fernet

    for position, key in enumerate(keys, start=1):
        try:
            Fernet(key.encode())
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: key {position} is not a Fernet key (32 url-safe base64-encoded bytes)."
            ) from None
    return keys
