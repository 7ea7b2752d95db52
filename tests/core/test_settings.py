"""Production settings are safe and refuse to start half-configured."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, **env_overrides: str) -> subprocess.CompletedProcess[str]:
    # A deployment has none of these; browser tests set the async one for their own process.
    unset = ("SECRET_KEY", "DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.production", **env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_production_refuses_to_start_without_secret_key():
    result = _manage("check")

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_check_deploy_passes_with_production_settings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY="x" * 20 + "-production-grade-secret-key-with-entropy-" + "y" * 20,
        ALLOWED_HOSTS="serveplan.example.internal",
    )

    assert result.returncode == 0, result.stdout + result.stderr
