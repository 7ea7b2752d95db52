"""site.yml for real against two stub GPU hosts on this machine (ansible_connection=local, each
with its own PATH of stubs and its own loopback address), registering in a live ServePlan.

One test, in the order an operator meets things: preflight refuses (too few free GPUs, a busy
port, a missing token) before touching anything; a run starts the allocation, passes the
smoke test and registers the targets linked to the plan; a second run changes nothing;
rollback.yml leaves nothing running. No secret appears in the archive, the output, the stubs'
records, the audit log or the pages.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from monitoring.models import Target
from planner.services import plan_create
from planner.services.bundles import plan_bundle
from tests.planner.deploy_stubs import make_host, read_calls

pytestmark = [
    pytest.mark.integration,
    pytest.mark.enable_socket,
    pytest.mark.django_db(transaction=True),
]

HOSTS = {"h1": "127.0.0.11", "h2": "127.0.0.12"}
HF_TOKEN = "hf_SecretReadToken123"
API_KEY = "sk-SecretClientKey456"
RECAP = re.compile(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def _spec():
    return {
        "model": "qwen2.5-32b",
        "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "hardware": {
            "nodes": [
                {
                    "hostname": host,
                    "address": address,
                    "gpu": "a100-80g-sxm",
                    "gpu_count": 4,
                    "nics": [{"name": "eth1", "speed_gbps": 25, "role": "data"}],
                }
                for host, address in HOSTS.items()
            ]
        },
    }


class Site:
    """The unpacked archive, the stub hosts and the ansible-playbook command."""

    def __init__(self, root: Path, files: dict[str, str], token: str) -> None:
        self.root = root
        self.bundle = root / "archive"
        for name, text in files.items():
            path = self.bundle / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.record = root / "calls.jsonl"
        sysfs = root / "sysfs" / "eth1"
        sysfs.mkdir(parents=True)
        (sysfs / "operstate").write_text("up\n")
        (sysfs / "speed").write_text("25000\n")
        self.token = token
        self.outputs: list[str] = []
        self.free_mib = {"h1": 80000, "h2": 80000}
        self.free_disk_gib = {"h1": 500, "h2": 500}

    def inventory(self) -> Path:
        hosts = {}
        for host, address in HOSTS.items():
            env = make_host(
                self.root / "hosts",
                host,
                address,
                record=self.record,
                gpus=4,
                free_mib=self.free_mib[host],
                free_disk_gib=self.free_disk_gib[host],
            )
            hosts[host] = {
                "ansible_connection": "local",
                "ansible_python_interpreter": "/usr/bin/python3",
                "serveplan_environment": env,
                "serveplan_dir": str(self.root / "hosts" / host / "bundle"),
                "serveplan_models_root": str(self.root / "hosts" / host / "models"),
                "serveplan_sysfs_net": str(self.root / "sysfs"),
                "serveplan_local_addresses": [],
                "serveplan_health_retries": 20,
                "serveplan_health_delay_s": 1,
            }
        path = self.root / "stub-hosts.json"
        path.write_text(json.dumps({"serveplan": {"hosts": hosts}}))
        return path

    def play(
        self, playbook: str, *extra: str, hf_token: str = HF_TOKEN
    ) -> subprocess.CompletedProcess:
        shutil.rmtree(self.root / "hosts" / "h1" / "bin", ignore_errors=True)
        shutil.rmtree(self.root / "hosts" / "h2" / "bin", ignore_errors=True)
        inventory = self.inventory()
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "NO_PROXY": "*",
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_FORKS": "2",
            "ANSIBLE_LOCAL_TEMP": str(self.root / "tmp"),
            "VLLM_API_KEY": API_KEY,
            "SERVEPLAN_API_TOKEN": self.token,
            **({"HF_TOKEN": hf_token} if hf_token else {}),
        }
        proc = subprocess.run(
            ["ansible-playbook", "-i", "inventory.ini", "-i", str(inventory), playbook, *extra],
            cwd=self.bundle,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.outputs.append(proc.stdout + proc.stderr)
        return proc

    def docker_runs(self) -> list[dict]:
        return [
            c for c in read_calls(self.record) if c["cmd"] == "docker" and c["argv"][0] == "run"
        ]


def _recap(proc) -> dict[str, tuple[int, int]]:
    return {m[0]: (int(m[1]), int(m[3])) for m in RECAP.findall(proc.stdout)}


def _refused(site: Site, expected: list[tuple[str, str]], **kwargs) -> None:
    """Run site.yml; assert every (host, check) is reported and nothing was touched."""
    before = len(read_calls(site.record))
    proc = site.play("site.yml", **kwargs)
    assert proc.returncode != 0
    for host, check in expected:
        assert f"{host}: preflight check '{check}' failed" in proc.stdout, proc.stdout[-3000:]
    touched = [
        c
        for c in read_calls(site.record)[before:]
        if c["cmd"] != "docker" or c["argv"][0] != "inspect"
    ]
    assert touched == [], touched  # refused before touching anything
    for host in HOSTS:
        assert not (site.root / "hosts" / host / "bundle").exists()


@pytest.fixture
def site(tmp_path, live_server, planner):
    if shutil.which("ansible-playbook") is None:
        pytest.skip("ansible is not installed (apt-get install -y ansible)")
    from core.models import ApiToken

    plan = plan_create(spec=_spec(), actor=planner)
    assert plan.result["recommendation"]["route"] == "A"
    files = plan_bundle(
        plan, plan.result["recommendation"]["candidate_id"], serveplan_url=live_server.url
    )
    _, token = ApiToken.issue(user=planner, name="deploy")
    s = Site(tmp_path, files, token)
    s.plan = plan
    s.files = files
    yield s
    if any((tmp_path / "hosts").glob("*/containers/*.json")):
        s.play("rollback.yml")  # never leave a stub server behind


def test_register_sh_creates_then_relinks_the_targets_with_curl(tmp_path, live_server, planner):
    """The registration without Ansible: curl and python3, the token on stdin, idempotent."""
    from core.models import ApiToken

    plan = plan_create(spec=_spec(), actor=planner)
    files = plan_bundle(
        plan, plan.result["recommendation"]["candidate_id"], serveplan_url=live_server.url
    )
    for name in ("register.sh", "serveplan.env"):
        (tmp_path / name).write_text(files[name])
    _, token = ApiToken.issue(user=planner, name="register.sh")
    env = {"PATH": "/usr/bin:/bin", "NO_PROXY": "*", "SERVEPLAN_API_TOKEN": token}

    def register() -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", str(tmp_path / "register.sh")], env=env, capture_output=True, text=True
        )

    first = register()
    assert first.returncode == 0, first.stderr
    assert first.stdout.count(": POST") == 4
    assert Target.objects.filter(plan=plan, enabled=True).count() == 4
    Target.objects.filter(name="h1/vllm-r0").update(enabled=False, plan=None)
    again = register()
    assert again.returncode == 0, again.stderr
    assert again.stdout.count(": registered") == 3
    assert again.stdout.count(": PATCH") == 1
    assert Target.objects.get(name="h1/vllm-r0").plan_id == plan.pk
    assert token not in first.stdout + first.stderr + again.stdout + again.stderr


def test_site_yml_deploys_registers_is_idempotent_and_rolls_back(site, client, planner):
    # --- preflight refuses, naming the host and every check it failed, before touching anything
    site.free_mib["h2"] = 1000
    site.free_disk_gib["h1"] = 10
    with socket.socket() as busy:
        busy.bind((HOSTS["h1"], 8000))
        busy.listen()
        _refused(
            site,
            [
                ("h2", "GPU count and free memory"),
                ("h1", "ports free"),
                ("h1", "disk space for the weights"),
                ("h1", "Hugging Face CLI and token"),
                ("h2", "Hugging Face CLI and token"),
            ],
            hf_token="",
        )
    site.free_mib["h2"] = 80000
    site.free_disk_gib["h1"] = 500

    # --- --check changes nothing
    check = site.play("site.yml", "--check")
    assert check.returncode == 0, check.stdout[-3000:]
    assert site.docker_runs() == []

    # --- the real run
    first = site.play("site.yml")
    assert first.returncode == 0, first.stdout[-5000:]
    runs = site.docker_runs()
    for host in HOSTS:
        vllm = [r["argv"] for r in runs if r["host"] == host and "--entrypoint" in r["argv"]]
        assert len(vllm) == 1, runs
        argv = vllm[0]
        assert argv[argv.index("--gpus") + 1] == '"device=0,1,2,3"'
        assert argv[argv.index("--port") + 1] == "8000"
        assert argv[argv.index("--restart") + 1] == "unless-stopped"
        assert "--tensor-parallel-size" in argv
        assert argv[argv.index("--tensor-parallel-size") + 1] == "4"
        images = {a for a in argv if a.startswith(("nginx:", "nvcr.io/"))}
        assert not images
        others = {
            a
            for r in runs
            if r["host"] == host
            for a in r["argv"]
            if a.startswith(("nginx:", "nvcr.io/"))
        }
        assert len(others) == 2  # an Nginx and a GPU exporter on every host
        fetched = [c for c in read_calls(site.record) if c["cmd"] == "hf" and c["host"] == host]
        assert len(fetched) == 1
        assert fetched[0]["token_set"]
        assert fetched[0]["argv"][-1].endswith(f"hosts/{host}/models/qwen2.5-32b-instruct")
    completions = [c for c in read_calls(site.record) if c["cmd"] == "completion"]
    answered = {c["argv"][0] for c in completions}
    assert answered >= {
        "serveplan-vllm-r0-h1",
        "serveplan-vllm-r1-h2",
        "serveplan-nginx-h1",
        "serveplan-nginx-h2",
    }
    targets = {t.name: t for t in Target.objects.all()}
    assert set(targets) == {"h1/vllm-r0", "h1/gpu-exporter", "h2/vllm-r1", "h2/gpu-exporter"}
    assert all(t.plan_id == site.plan.pk and t.enabled for t in targets.values())
    assert targets["h2/vllm-r1"].base_url == "http://127.0.0.12:8000"
    assert targets["h1/gpu-exporter"].kind == "gpu"

    # --- a second run changes nothing
    second = site.play("site.yml")
    assert second.returncode == 0, second.stdout[-3000:]
    assert {h: c for h, (c, _) in _recap(second).items()} == {"h1": 0, "h2": 0, "localhost": 0}
    assert len(site.docker_runs()) == len(runs)

    # --- smoke-test.sh, the same test without Ansible: the key from the environment (or .env)
    for key, code in ((API_KEY, 0), ("wrong-key", 1)):
        smoke = subprocess.run(
            ["bash", str(site.bundle / "smoke-test.sh")],
            env={"PATH": "/usr/bin:/bin", "NO_PROXY": "*", "VLLM_API_KEY": key},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert smoke.returncode == code, smoke.stdout + smoke.stderr
        assert smoke.stdout.count("ok ") == (4 if code == 0 else 0)
        assert API_KEY not in smoke.stdout + smoke.stderr

    # --- rollback leaves nothing running
    back = site.play("rollback.yml")
    assert back.returncode == 0, back.stdout[-3000:]
    for host, address in HOSTS.items():
        assert not list((site.root / "hosts" / host / "containers").glob("*.json"))
        assert not (site.root / "hosts" / host / "bundle").exists()
        with socket.socket() as probe:
            assert probe.connect_ex((address, 8000)) != 0
    assert not Target.objects.filter(enabled=True).exists()

    # --- no secret anywhere but the hosts' .env (deleted by the rollback)
    client.force_login(planner)
    pages = "".join(
        client.get(url).content.decode()
        for url in ("/monitoring/targets/", site.plan.get_absolute_url())
    )
    history = json.dumps([list(h.values()) for h in Target.history.all().values()], default=str)
    haystacks = {
        "archive": "".join(site.files.values()),
        "output": "".join(site.outputs),
        "records": site.record.read_text(),
        "audit": history,
        "pages": pages,
    }
    for secret in (HF_TOKEN, API_KEY, site.token):
        for where, text in haystacks.items():
            assert secret not in text, where
