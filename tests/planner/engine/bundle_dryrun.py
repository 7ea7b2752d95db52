"""Dry-run a deployment bundle: every host's scripts with stub vllm/ray/docker/nvidia-smi on PATH.

Each host gets its own copy of the bundle (as an operator would copy it), the steps run in the
README's order, and every stub records its argv and the environment that matters. The tests
then compare the recording with the plan itself (never with the allocation table only).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from planner.engine.configs.bundle import Bundle

STUBS = (
    "vllm",
    "ray",
    "serve",
    "docker",
    "nvidia-smi",
    "curl",
    "nginx",
    "systemctl",
    "dcgm-exporter",
    "litellm",
)
RECORDED_ENV = ("CUDA_VISIBLE_DEVICES", "PYTHONPATH", "NCCL_SOCKET_IFNAME")

# A bash stub (a Python one costs ~50 ms per call): one file per call, fields NUL-separated:
# host, command, then NAME=value for each recorded variable that is set, "--", then argv.
_STUB = r"""#!/bin/bash
out="$DRYRUN_DIR/$EPOCHREALTIME-$$"
{
  printf '%s\0' "$DRYRUN_HOST" "${0##*/}"
  for name in __ENV__; do
    if [ -n "${!name+x}" ]; then printf '%s\0' "$name=${!name}"; fi
  done
  printf '%s\0' -- "$@"
} >"$out.tmp"
mv "$out.tmp" "$out.call"
"""

# systemd-run records itself like the others, then runs the unit's command as systemd would:
# with the --setenv variables, in the foreground (the stubs it starts exit at once).
_SYSTEMD_RUN = (
    _STUB
    + r"""
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    --setenv=*) export "${1#--setenv=}" ;;
  esac
  shift
done
"$@"
"""
)


@dataclass(frozen=True)
class Call:
    host: str
    cmd: str
    argv: tuple[str, ...]
    env: dict[str, str]
    script: str

    def flag(self, name: str) -> str | None:
        """Return the value after `name` (or of `name=value`), else None."""
        for i, a in enumerate(self.argv):
            if a == name and i + 1 < len(self.argv):
                return self.argv[i + 1]
            if a.startswith(name + "="):
                return a.split("=", 1)[1]
        return None


def write_stubs(root: Path) -> Path:
    stubs = root / "bin"
    stubs.mkdir(parents=True, exist_ok=True)
    for name, text in ((n, _STUB) for n in STUBS):
        path = stubs / name
        path.write_text(text.replace("__ENV__", " ".join(RECORDED_ENV)))
        path.chmod(0o755)
    path = stubs / "systemd-run"
    path.write_text(_SYSTEMD_RUN.replace("__ENV__", " ".join(RECORDED_ENV)))
    path.chmod(0o755)
    return stubs


def unpack(files: dict[str, str], target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (target / name).write_text(text)
        if name.endswith(".sh"):
            (target / name).chmod(0o755)


def _wait_for_background(host_dir: Path) -> None:
    """Wait until the processes a launch script put in the background have recorded and exited."""
    deadline = time.monotonic() + 20
    for pid_file in (host_dir / "run").glob("*.pid"):
        pid = int(pid_file.read_text().strip())
        while time.monotonic() < deadline and _running(pid):
            time.sleep(0.01)


def _running(pid: int) -> bool:
    """Return True while `pid` runs (an exited child nobody reaped yet is a zombie: done)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _read_calls(record: Path, script: str) -> list[Call]:
    """Return the calls recorded since the last read, oldest first, and remove their files."""
    calls = []
    for path in sorted(record.glob("*.call"), key=lambda p: float(p.name.split("-")[0])):
        fields = path.read_bytes().decode().split("\0")[:-1]
        path.unlink()
        host, cmd, rest = fields[0], fields[1], fields[2:]
        cut = rest.index("--")
        env = dict(item.split("=", 1) for item in rest[:cut])
        calls.append(Call(host=host, cmd=cmd, argv=tuple(rest[cut + 1 :]), env=env, script=script))
    return calls


def run_script(
    root: Path, host: str, script: str, *, docker: bool, record: Path, stubs: Path
) -> subprocess.CompletedProcess[str]:
    host_dir = root / "hosts" / host
    env = {
        "PATH": f"{stubs}:/usr/bin:/bin",
        "HOME": str(root / "home"),
        "DRYRUN_HOST": host,
        "DRYRUN_DIR": str(record),
        "NGINX_CONF_DIR": str(root / "nginx-conf" / host),
        "LANG": "C.UTF-8",
    }
    (root / "nginx-conf" / host).mkdir(parents=True, exist_ok=True)
    args = ["bash", str(host_dir / script)] + (["--docker"] if docker else [])
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)
    _wait_for_background(host_dir)
    return proc


def dry_run(bundle: Bundle, root: Path, *, docker: bool = False, stop: bool = True) -> list[Call]:
    """Run the bundle's steps in order (then every stop script); return what the stubs saw."""
    if root.exists():
        shutil.rmtree(root)
    stubs = write_stubs(root)
    record = root / "calls"
    record.mkdir()
    files = bundle.file_map()
    for h in bundle.table.hosts:
        unpack(files, root / "hosts" / h.host)
    calls: list[Call] = []
    steps = [(s.host, s.script) for s in bundle.steps]
    if stop:
        steps += [(h.host, f"stop-{h.host}.sh") for h in reversed(bundle.table.hosts)]
    for host, script in steps:
        proc = run_script(root, host, script, docker=docker, record=record, stubs=stubs)
        assert proc.returncode == 0, f"{script} on {host}: {proc.returncode}\n{proc.stderr}"
        calls += _read_calls(record, script)
    return calls
