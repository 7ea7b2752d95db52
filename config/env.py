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
