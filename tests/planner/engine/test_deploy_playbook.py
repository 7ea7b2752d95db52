"""The deployment playbook of every route and backend: Ansible's syntax check and ansible-lint,
its filters, and the quoting of every value that reaches a playbook or group_vars file."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine.configs.deploy import ansible_filters as f
from planner.engine.configs.deploy.ansible_yaml import Unsafe, dump, unsafe_tree
from planner.engine.configs.deploy.files import Registration
from tests.planner.engine.deploy_bundles import PLAN_ID, UnsafeLoader, every_variant, write_archive

PLAYBOOKS = ("site.yml", "stop.yml", "rollback.yml")


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    root = tmp_path_factory.mktemp("archives")
    registration = Registration(serveplan_url="https://serveplan.example", plan=PLAN_ID)
    out = {}
    for key, bundle in every_variant().items():
        write_archive(bundle, root / key, registration)
        out[key] = root / key
    assert sorted(out) == ["A-mp", "B-mp", "B-ray", "C-ray", "pool-A", "pool-A-shared", "single-mp"]
    return out


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed (apt-get install -y ansible ansible-lint)")
    return path


def _passes_in_every_archive(archives, argv: list[str], timeout_s: int) -> None:
    for key, root in archives.items():
        proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=timeout_s)
        assert proc.returncode == 0, (key, proc.stdout, proc.stderr)


def test_every_route_and_backend_passes_ansible_syntax_check(archives):
    _passes_in_every_archive(
        archives, [_tool("ansible-playbook"), "--syntax-check", *PLAYBOOKS], 120
    )


def test_every_route_and_backend_passes_ansible_lint(archives):
    _passes_in_every_archive(
        archives, [_tool("ansible-lint"), "--nocolor", "--offline", *PLAYBOOKS], 300
    )


def test_group_vars_hold_the_allocation_the_scripts_use(archives):
    data = yaml.load(
        (archives["A-mp"] / "group_vars/all/allocation.yml").read_text(), Loader=UnsafeLoader
    )
    h1 = data["serveplan_hosts"]["h1"]
    vllm = next(p for p in h1["processes"] if p["kind"] == "vllm")
    launch = (archives["A-mp"] / "launch-h1.sh").read_text()
    assert vllm["gpus"] == '"device=0,1,2,3"'
    assert "'\"device=0,1,2,3\"'" in launch
    assert vllm["command"][-2:] == ["--port", "8000"]
    assert "--port 8000" in launch
    assert vllm["command"][1] == "/models/qwen2.5-32b-instruct" in launch
    assert [t["kind"] for t in data["serveplan_targets"]] == ["vllm", "gpu", "vllm", "gpu"]
    assert {p["name"] for p in h1["processes"]} == {"vllm-r0", "nginx", "gpu-exporter"}


# ------------------------------------------------------------------------- the filters

PROC_NET_TCP = """  sl  local_address rem_address   st tx_queue rx_queue
   0: 0B00007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000
   1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000
   2: 0C00007F:2329 00000000:0000 01 00000000:00000000 00:00000000 00000000
"""


def test_busy_ports_counts_wildcards_and_this_hosts_addresses_only():
    # 127.0.0.11:8000 and 0.0.0.0:80 listen; 127.0.0.12:9001 is a connection, not a listener.
    assert f.busy_ports(PROC_NET_TCP, [80, 8000, 9001], ["127.0.0.11"]) == [80, 8000]
    assert f.busy_ports(PROC_NET_TCP, [80, 8000, 9001], ["127.0.0.12"]) == [80]


def test_free_gpus_need_the_share_vllm_takes():
    csv = "0, 80000, 81920\n1, 70000, 81920\n2, 81000, 81920\n"
    assert f.free_gpus(csv, 0.9) == [0, 2]
    assert f.driver_major("535.104.05\n550.54.15\n") == 535


def test_target_action_creates_relinks_or_leaves_alone():
    target = {
        "name": "h1/vllm-r0",
        "kind": "vllm",
        "base_url": "http://a:8000",
        "plan_scope": "replica",
    }
    assert f.target_action({"results": []}, target, PLAN_ID)["method"] == "POST"
    same = {**target, "id": 4, "plan": PLAN_ID, "enabled": True}
    assert f.target_action({"results": [same]}, target, PLAN_ID)["method"] == ""
    other = {**same, "plan": None}
    assert f.target_action({"results": [other]}, target, PLAN_ID)["path"] == "4/"
    similar = {**same, "name": "h1/vllm-r0-old"}  # the API's name filter is `contains`
    assert f.target_action({"results": [similar]}, target, PLAN_ID)["method"] == "POST"


def test_run_argv_has_the_restart_policy_and_a_label_that_follows_the_config():
    process = {
        "container": "c",
        "gpus": '"device=0,1"',
        "cap_add": [],
        "env": {},
        "volumes": [{"root": "models", "source": "m", "target": "/models/m"}],
        "entrypoint": "vllm",
        "image": "img",
        "command": ["serve", "/models/m"],
    }
    argv = f.run_argv(process, "docker", "/b", "/srv/models", "tag")
    assert argv[:7] == ["docker", "run", "-d", "--name", "c", "--restart", "unless-stopped"]
    assert "/srv/models/m:/models/m:ro" in argv
    assert argv[-3:] == ["img", "serve", "/models/m"]
    moved = f.run_argv(process, "docker", "/b", "/data/models", "tag")
    assert f.config_label(argv) != f.config_label(moved)


# ------------------------------------------------------------------------- quoting


VALUES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\ufeff"),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(value=VALUES, items=st.lists(VALUES, max_size=4))
def test_every_value_reaches_group_vars_unchanged_and_untemplated(value, items):
    data = unsafe_tree({"a": value, "b": items, "c": {"d": value}})
    text = dump(data)
    back = yaml.load(text, Loader=UnsafeLoader)
    assert back == {"a": value, "b": items, "c": {"d": value}}
    assert isinstance(back["a"], Unsafe)
    assert all(isinstance(x, Unsafe) for x in back["b"])
    assert all(len(line) <= 160 or "'" in line or '"' in line for line in text.splitlines())


HOSTILE = [
    "{{ lookup('pipe', 'touch PWNED') }}",
    "{% for x in range(3) %}x{% endfor %}",
    "a: b\n- c",
    "'\"\\ $(touch PWNED) `id`",
    "yes",
    "0x10",
    "~",
    "#!comment",
    "é中\u2028",
]


def test_ansible_itself_reads_hostile_values_as_plain_text(tmp_path):
    """The real Ansible loads dump()'s YAML: no templating, no type coercion, every byte kept."""
    playbook = _tool("ansible-playbook")
    (tmp_path / "group_vars" / "all").mkdir(parents=True)
    (tmp_path / "group_vars" / "all" / "v.yml").write_text(dump({"hostile": unsafe_tree(HOSTILE)}))
    (tmp_path / "inventory.ini").write_text("[serveplan]\nlocal ansible_connection=local\n")
    out = tmp_path / "out.json"
    (tmp_path / "play.yml").write_text(
        dump(
            [
                {
                    "name": "Echo",
                    "hosts": "serveplan",
                    "gather_facts": False,
                    "tasks": [
                        {
                            "name": "Write the values",
                            "ansible.builtin.copy": {
                                "content": "{{ hostile | to_json }}",
                                "dest": str(out),
                                "mode": "0600",
                            },
                        }
                    ],
                }
            ]
        )
    )
    proc = subprocess.run(
        [
            playbook,
            "-i",
            "inventory.ini",
            "play.yml",
            "-e",
            "ansible_python_interpreter=/usr/bin/python3",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import json

    assert json.loads(out.read_text()) == HOSTILE
    assert not (tmp_path / "PWNED").exists()


def test_registration_refuses_a_url_or_plan_id_that_would_need_quoting():
    with pytest.raises(ValueError, match="URL"):
        Registration(serveplan_url="http://x/'; touch PWNED #")
    with pytest.raises(ValueError, match="plan"):
        Registration(plan="not-a-uuid $(id)")


def test_a_long_host_name_still_gives_a_unique_target_name_within_the_limit():
    from planner.engine.configs.deploy.targets import TARGET_NAME_MAX, target_name

    long_a, long_b = "a" * 95 + ".x", "a" * 95 + ".y"
    names = {target_name(h, "gpu-exporter") for h in (long_a, long_b)}
    assert len(names) == 2
    assert all(len(n) <= TARGET_NAME_MAX and n.endswith("/gpu-exporter") for n in names)
    assert target_name("h1", "vllm-r0") == "h1/vllm-r0"


_CURL_STUB = """#!/bin/bash
# Records curl's argv (one NUL-separated file per call) and what it read on stdin.
out="$STUB_DIR/$EPOCHREALTIME-$$"
printf '%s\\0' "$@" >"$out.argv"
cat >"$out.stdin"
"""


@settings(max_examples=25, deadline=None)
@given(model=VALUES.filter(lambda v: v), label=VALUES.filter(lambda v: v))
def test_smoke_test_sends_every_model_name_and_label_unchanged(model, label):
    """Whatever the served name holds, curl gets exactly its JSON body; the key only on stdin."""
    import json
    import tempfile
    from pathlib import Path

    from planner.engine.configs.deploy.ops_scripts import smoke_test_script
    from planner.engine.configs.deploy.targets import SmokeEndpoint

    script = smoke_test_script([SmokeEndpoint(label=label, base_url="http://h:8000", model=model)])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bin").mkdir()
        (root / "bin" / "curl").write_text(_CURL_STUB)
        (root / "bin" / "curl").chmod(0o755)
        (root / "smoke-test.sh").write_text(script)
        env = {"PATH": f"{root / 'bin'}:/usr/bin:/bin", "STUB_DIR": tmp, "VLLM_API_KEY": "k-1"}
        proc = subprocess.run(
            ["bash", str(root / "smoke-test.sh")], env=env, capture_output=True, timeout=30
        )
        assert proc.returncode == 0, proc.stderr
        (call,) = root.glob("*.argv")
        argv = call.read_bytes().decode().split("\0")[:-1]
        stdin = call.with_suffix(".stdin").read_text()
    assert json.loads(argv[argv.index("-d") + 1])["model"] == model
    assert argv[-1] == "http://h:8000/v1/completions"
    assert "k-1" not in " ".join(argv)
    assert stdin == "Authorization: Bearer k-1\n"
    assert proc.stdout.decode() == f"ok      {label}\n"
