"""Stub GPU hosts for a real run of the playbook on this machine: nvidia-smi, docker, hf and
timedatectl on each host's own PATH, recording their calls (never an environment value).

`docker run` of a vLLM, Nginx or GPU-exporter container starts a tiny HTTP server on the host's
loopback address and port from the argv: /health and /metrics answer, /v1/completions answers
only with the API key of the --env-file. `docker rm -f` stops it; state lives in a directory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

_DOCKER = r"""#!/usr/bin/python3
import json, os, signal, socket, subprocess, sys, time
env = os.environ
args = sys.argv[1:]
with open(env["STUB_RECORD"], "a") as fh:
    fh.write(json.dumps({"host": env["STUB_HOST"], "cmd": "docker", "argv": args}) + "\n")
state = env["STUB_STATE"]
os.makedirs(state, exist_ok=True)
path = lambda name: os.path.join(state, name + ".json")


def flag(name):
    return args[args.index(name) + 1] if name in args else None


verb = args[0]
if verb == "run":
    name = flag("--name")
    if os.path.exists(path(name)):
        sys.exit("Conflict: the container name is in use")
    labels = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--label")
    key = ""
    with open(flag("--env-file")) as fh:
        for line in fh:
            if line.startswith("VLLM_API_KEY="):
                key = line.strip().split("=", 1)[1]
    port = flag("--port") or ("80" if "nginx:" in " ".join(args) else "")
    port = port or ("9400" if "dcgm-exporter" in " ".join(args) else "")
    pid = 0
    if port:
        server = subprocess.Popen(
            [sys.executable, env["STUB_SERVER"], env["STUB_ADDRESS"], port, key, name],
            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        pid = server.pid
        for _ in range(100):
            try:
                socket.create_connection((env["STUB_ADDRESS"], int(port)), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
    with open(path(name), "w") as fh:
        json.dump({"labels": labels, "pid": pid}, fh)
    print("c0ffee")
elif verb == "inspect":
    if not os.path.exists(path(args[-1])):
        sys.exit("Error: No such object: " + args[-1])
    with open(path(args[-1])) as fh:
        print(json.dumps(json.load(fh)["labels"]), "true")
elif verb == "rm":
    if not os.path.exists(path(args[-1])):
        sys.exit("Error: No such container: " + args[-1])
    with open(path(args[-1])) as fh:
        pid = json.load(fh)["pid"]
    if pid:
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    os.remove(path(args[-1]))
    print(args[-1])
"""

_SERVER = r"""import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

address, port, key, name = sys.argv[1:5]


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, body=b"{}"):
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(200 if self.path in ("/health", "/metrics") else 404)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/v1/completions":
            return self._send(404)
        if not key or self.headers.get("authorization") != "Bearer " + key:
            return self._send(401)
        with open(os.environ["STUB_RECORD"], "a") as fh:
            fh.write(json.dumps({"host": os.environ["STUB_HOST"], "cmd": "completion",
                                 "argv": [name, body.get("model", "")]}) + "\n")
        self._send(200, json.dumps({"choices": [{"text": " hello"}]}).encode())

    def log_message(self, *args):
        pass


ThreadingHTTPServer((address, int(port)), Handler).serve_forever()
"""

_NVIDIA_SMI = r"""#!/bin/bash
n="${STUB_GPUS:-0}"
for ((i = 0; i < n; i++)); do
  case "$*" in
    *driver_version*) echo "550.54.15" ;;
    *) echo "$i, ${STUB_FREE_MIB:-80000}, 81920" ;;
  esac
done
"""

_HF = r"""#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
with open(os.environ["STUB_RECORD"], "a") as fh:
    fh.write(json.dumps({"host": os.environ["STUB_HOST"], "cmd": "hf", "argv": args,
                         "token_set": bool(os.environ.get("HF_TOKEN"))}) + "\n")
target = args[args.index("--local-dir") + 1]
os.makedirs(target, exist_ok=True)
with open(os.path.join(target, "config.json"), "w") as fh:
    fh.write("{}")
"""

_TIMEDATECTL = "#!/bin/bash\necho yes\n"

# The host's disk, not this machine's: `df -Pk DIR` as POSIX prints it, with the free space the
# test gives the host (the weights check must not depend on how full the runner's disk is).
_DF = r"""#!/bin/bash
echo "Filesystem 1024-blocks Used Available Capacity Mounted on"
echo "stub $(( STUB_FREE_DISK_GIB * 2 * 1048576 )) 0 $(( STUB_FREE_DISK_GIB * 1048576 )) 50% /"
"""


def make_host(
    root: Path,
    host: str,
    address: str,
    *,
    record: Path,
    gpus: int,
    free_mib: int,
    free_disk_gib: int = 500,
):
    """Create a host's stub directory; return the environment its tasks run with."""
    bin_dir = root / host / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in (
        ("docker", _DOCKER),
        ("nvidia-smi", _NVIDIA_SMI),
        ("hf", _HF),
        ("timedatectl", _TIMEDATECTL),
        ("df", _DF),
    ):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    server = root / "stub_server.py"
    server.write_text(_SERVER)
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "STUB_HOST": host,
        "STUB_ADDRESS": address,
        "STUB_STATE": str(root / host / "containers"),
        "STUB_RECORD": str(record),
        "STUB_SERVER": str(server),
        "STUB_GPUS": str(gpus),
        "STUB_FREE_MIB": str(free_mib),
        "STUB_FREE_DISK_GIB": str(free_disk_gib),
        "NO_PROXY": "*",
        "no_proxy": "*",
    }


def read_calls(record: Path) -> list[dict]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line]


__all__ = ["make_host", "read_calls", "sys"]
