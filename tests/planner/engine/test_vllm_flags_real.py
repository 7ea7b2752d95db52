"""Every flag in VLLM_SERVE_FLAGS exists in the real `vllm serve` parser (vLLM CPU 0.32 venv)."""

import os
import subprocess
from pathlib import Path

import pytest

from planner.engine.vllm_flags import VLLM_SERVE_FLAGS

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.vllm


def _vllm_python() -> str:
    explicit = os.environ.get("SERVEPLAN_VLLM_PYTHON")
    if explicit:
        return explicit
    made = subprocess.run(
        [str(ROOT / "scripts" / "ensure-vllm-venv")], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        pytest.fail(f"cannot prepare the vLLM CPU venv: {made.stderr[-2000:]}")
    return made.stdout.strip().splitlines()[-1]


def test_flag_list_matches_the_real_parser():
    python = _vllm_python()
    version = subprocess.run(
        [python, "-c", "import vllm; print(vllm.__version__)"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.strip()
    out = subprocess.run(
        [python, str(Path(__file__).with_name("dump_vllm_serve_flags.py"))],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    real = set(out.stdout.split())
    assert version.startswith("0.32")
    missing = sorted(VLLM_SERVE_FLAGS - real)
    assert not missing


def test_every_generated_vllm_serve_line_parses_with_the_real_parser():
    """Each bundle's `vllm serve` argv (and each Serve replica's) goes through vLLM's parser."""
    import json

    import yaml

    from planner.engine.configs.allocation import ProcessKind
    from tests.planner.engine.test_bundles import _all_bundles

    argvs = []
    for bundle in _all_bundles():
        for p in bundle.table.processes:
            if p.kind in (ProcessKind.VLLM, ProcessKind.VLLM_HEADLESS):
                argvs.append(list(p.argv[1:]))
        if bundle.route == "C":
            for app in yaml.safe_load(bundle.file("serve.yaml"))["applications"]:
                args = app["args"]
                argvs.append(["serve", args["model"], *args["vllm_args"]])
    assert len(argvs) >= 10
    out = subprocess.run(
        [_vllm_python(), str(Path(__file__).with_name("parse_vllm_serve_argv.py"))],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
