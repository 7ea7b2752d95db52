"""Each pure module imports first, alone, and without Django: every one in a fresh interpreter,
since an import cycle shows only for the module that starts it (importing monitoring.series or
its remote_write before monitoring.scrape failed half-way; Django's own import order hid it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE_PACKAGES = (
    "monitoring/scrape",
    "monitoring/series",
    "monitoring/simulator",
    "benchmarks/loadgen",
)
PURE_MODULES = ("monitoring.partitioning",)
# What importing a pure module must not bring along.
FRAMEWORKS = ("django", "rest_framework", "celery")
CODE = (
    "import importlib, sys; importlib.import_module(sys.argv[1]);"
    f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r})))"
)


def _modules() -> list[str]:
    found = list(PURE_MODULES)
    for package in PURE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":  # runs the simulator
                continue
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


@pytest.mark.parametrize("module", _modules())
def test_a_pure_module_imports_first_and_alone_without_django(module):
    done = subprocess.run(
        [sys.executable, "-c", CODE, module],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
