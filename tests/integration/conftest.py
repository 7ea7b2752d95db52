"""The real vLLM CPU server with a tiny random model, started once for the `vllm` tests.

Needs the separate vLLM venv made by scripts/ensure-vllm-venv (CI makes it). When vLLM cannot run
here the tests fail loudly with the reason: a skipped test would hide a broken poller.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER_SCRIPT = ROOT / "tests" / "integration" / "vllm_tiny_server.py"


@dataclass(frozen=True)
class TinyVllm:
    url: str
    model_dir: Path  # the tiny Llama and its tokenizer (what `vllm bench serve` loads)
    python: str  # the vLLM venv's interpreter


def vllm_python() -> str:
    explicit = os.environ.get("SERVEPLAN_VLLM_PYTHON")
    if explicit:
        return explicit
    made = subprocess.run(
        [str(ROOT / "scripts" / "ensure-vllm-venv")], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        pytest.fail(f"cannot prepare the vLLM CPU venv: {made.stderr[-2000:]}")
    return made.stdout.strip().splitlines()[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def tiny_vllm(tmp_path_factory) -> Iterator[TinyVllm]:
    """Start the tiny model on a free loopback port; stop exactly that process afterwards."""
    work = tmp_path_factory.mktemp("vllm")
    port = _free_port()
    log_path = work / "server.log"
    python = vllm_python()
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [python, str(SERVER_SCRIPT), str(work), str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            if server.poll() is not None:
                tail = log_path.read_text()[-4000:]
                pytest.fail(f"vLLM exited with {server.returncode}:\n{tail}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM did not start in 10 min:\n{log_path.read_text()[-4000:]}")
            time.sleep(2)
        yield TinyVllm(url=base, model_dir=work / "tiny-llama", python=python)
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
