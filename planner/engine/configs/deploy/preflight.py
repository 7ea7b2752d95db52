"""The playbook's preflight: every check on every host, before anything is touched.

Each check is an assert whose message names the host and the check. Every check runs, then
one task refuses with all the failures of the host; the play is any_errors_fatal, so one
failing host stops the run on all of them. Probes run in --check too.
"""

from __future__ import annotations

import re
from typing import Any

# Data-centre GPUs run the CUDA 12 images of vLLM from driver 535 on (CUDA minor-version
# compatibility, NVIDIA's CUDA compatibility guide); older drivers refuse to start them.
MIN_DRIVER_MAJOR = 535
SECRET_PATTERN = r"^[A-Za-z0-9_.~+/=-]+$"  # one .env line: no spaces, quotes or newlines


def probe(name: str, argv: list[str] | str, register: str, **extra: Any) -> dict[str, Any]:
    """Return a read-only command task: it changes nothing and runs in --check mode too."""
    return {
        "name": name,
        "ansible.builtin.command": {"argv": argv},
        "register": register,
        "changed_when": False,
        "check_mode": False,
        **extra,
    }


def check(name: str, that: list[str] | str, message: str) -> dict[str, Any]:
    """Return an assert naming the host and the check; refuse() reports it when it fails."""
    return {
        "name": f"Check {name}",
        "ansible.builtin.assert": {
            "that": that,
            "fail_msg": f"{{{{ inventory_hostname }}}}: preflight check '{name}' failed: {message}",
            "quiet": True,
        },
        "register": _register_of(name),
        "failed_when": False,
    }


def _register_of(name: str) -> str:
    return "serveplan_check_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def refuse(checks: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the task that fails a host with every check it failed (a failed assert is the
    only result with `evaluated_to`)."""
    names = ", ".join(t["register"] for t in checks)
    return {
        "name": "Refuse this host when a check failed",
        "ansible.builtin.fail": {
            "msg": "{{ [" + names + "] | selectattr('evaluated_to', 'defined') "
            "| map(attribute='msg') | join('; ') }}"
        },
        "when": "[" + names + "] | selectattr('evaluated_to', 'defined') | list | length > 0",
    }


def engine_task() -> dict[str, Any]:
    """Return the task that finds docker or podman (the configured one first)."""
    return {
        "name": "Find the container engine (docker or podman)",
        "ansible.builtin.shell": {
            "cmd": "command -v {{ serveplan_container_engine | quote }} || command -v docker "
            "|| command -v podman",
            "executable": "/bin/bash",
        },
        "register": "serveplan_engine_path",
        "changed_when": False,
        "check_mode": False,
    }


def _engine_checks() -> list[dict[str, Any]]:
    """The container engine, and which of the bundle's containers already run as planned."""
    return [
        {**engine_task(), "failed_when": False},
        check(
            "container engine",
            "serveplan_engine_path.rc == 0",
            "neither docker nor podman is installed",
        ),
        {
            "name": "Remember the container engine",
            "ansible.builtin.set_fact": {
                "serveplan_engine": "{{ serveplan_engine_path.stdout_lines | default(['docker'], "
                "true) | first | basename }}"
            },
        },
        probe(
            "Inspect this bundle's containers",
            [
                "{{ serveplan_engine }}",
                "inspect",
                "--format",
                "{{ serveplan_inspect_format }}",
                "{{ item.container }}",
            ],
            "serveplan_inspected",
            loop="{{ serveplan_processes | selectattr('container') | list }}",
            loop_control={"label": "{{ item.container }}"},
            failed_when=False,
        ),
        {
            "name": "Work out what is already running as planned",
            "ansible.builtin.set_fact": {
                "serveplan_running": "{{ serveplan_inspected.results "
                "| serveplan_running_configs }}",
                "serveplan_to_start": "{{ serveplan_processes | serveplan_to_start("
                "serveplan_inspected.results | serveplan_running_configs, serveplan_engine, "
                "serveplan_dir, serveplan_models_root, serveplan_bundle_tag) }}",
            },
        },
    ]


def _gpu_checks() -> list[dict[str, Any]]:
    """The driver, and the GPUs the services still to start need, with their memory free."""
    return [
        probe(
            "Read the GPUs (index, free and total memory)",
            [
                "nvidia-smi",
                "--query-gpu=index,memory.free,memory.total",
                "--format=csv,noheader,nounits",
            ],
            "serveplan_gpus",
            failed_when=False,
        ),
        probe(
            "Read the driver version",
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            "serveplan_driver",
            failed_when=False,
        ),
        check(
            "driver and CUDA",
            [
                "serveplan_driver.rc == 0",
                "(serveplan_driver.stdout | serveplan_driver_major) >= serveplan_min_driver_major",
            ],
            "nvidia-smi must answer with driver {{ serveplan_min_driver_major }} or newer "
            "(found: {{ serveplan_driver.stdout_lines | default([]) | first | default('none') }})",
        ),
        {
            "name": "Work out the GPUs the services still to start need",
            "ansible.builtin.set_fact": {
                "serveplan_needed_gpus": "{{ serveplan_to_start | map(attribute='gpu_indices') "
                "| flatten | unique | sort }}",
                "serveplan_free_gpus": "{{ serveplan_gpus.stdout "
                "| serveplan_free_gpus(serveplan_gpu_memory_utilization) }}",
            },
        },
        check(
            "GPU count and free memory",
            "serveplan_needed_gpus | difference(serveplan_free_gpus) | length == 0",
            "GPUs {{ serveplan_needed_gpus | difference(serveplan_free_gpus) | join(',') }} are "
            "missing or have less than {{ serveplan_gpu_memory_utilization }} of their memory "
            "free (free: {{ serveplan_free_gpus | join(',') or 'none' }})",
        ),
    ]


def _port_checks() -> list[dict[str, Any]]:
    """The ports the services still to start listen on, free on this host."""
    return [
        probe(
            "Read the listening TCP sockets",
            ["cat", "/proc/net/tcp", "/proc/net/tcp6"],
            "serveplan_sockets",
            failed_when=False,
        ),
        {
            "name": "Work out the ports already taken",
            "ansible.builtin.set_fact": {
                "serveplan_busy_ports": "{{ serveplan_sockets.stdout | serveplan_busy_ports("
                "serveplan_to_start | map(attribute='ports') | flatten, "
                "[serveplan_address] + serveplan_local_addresses) }}"
            },
        },
        check(
            "ports free",
            "serveplan_busy_ports | length == 0",
            "ports {{ serveplan_busy_ports | join(',') }} are already taken on this host",
        ),
    ]


def _nic_checks() -> list[dict[str, Any]]:
    """Across hosts: the NCCL interface up at the planned speed."""
    return [
        probe(
            "Read the NCCL interface's state and speed",
            [
                "cat",
                "{{ serveplan_sysfs_net }}/{{ serveplan_nic.interface }}/operstate",
                "{{ serveplan_sysfs_net }}/{{ serveplan_nic.interface }}/speed",
            ],
            "serveplan_link",
            failed_when=False,
            when="serveplan_nic",
        ),
        check(
            "NCCL interface and link speed",
            [
                "not serveplan_nic or serveplan_link.rc == 0",
                "not serveplan_nic or (serveplan_link.stdout_lines + ['', ''])[0] == 'up'",
                "not serveplan_nic or ((serveplan_link.stdout_lines + ['', ''])[1] | int) >= "
                "(serveplan_nic.speed_gbps * 1000) | int",
            ],
            "{{ serveplan_nic.interface | default('') }} must be up at "
            "{{ serveplan_nic.speed_gbps | default('') }} Gb/s or more, as planned",
        ),
    ]


def _weights_checks() -> list[dict[str, Any]]:
    """The weights: fetched already, provided by the operator, or fetched now (room, token)."""
    return [
        {
            "name": "Look for weights already fetched",
            "ansible.builtin.stat": {
                "path": "{{ serveplan_models_root }}/{{ item.dir_name }}/{{ serveplan_marker }}"
            },
            "register": "serveplan_fetched",
            "loop": "{{ serveplan_models | selectattr('repo') | list }}",
            "loop_control": {"label": "{{ item.path }}"},
        },
        {
            "name": "Look for the checkpoints the operator provides",
            "ansible.builtin.stat": {"path": "{{ item.path }}/config.json"},
            "register": "serveplan_provided",
            "loop": "{{ serveplan_models | rejectattr('repo') | list }}",
            "loop_control": {"label": "{{ item.path }}"},
        },
        check(
            "quantized checkpoints present",
            "serveplan_provided.results | rejectattr('stat.exists') | list | length == 0",
            "put the checkpoint at {{ serveplan_provided.results | rejectattr('stat.exists') "
            "| map(attribute='item.path') | join(', ') }} (README.md)",
        ),
        {
            "name": "Work out the weights still to fetch",
            "ansible.builtin.set_fact": {
                "serveplan_to_fetch": "{{ serveplan_fetched.results | rejectattr('stat.exists') "
                "| map(attribute='item') | list }}"
            },
        },
        {
            "name": "Read the free disk space for the weights",
            "ansible.builtin.shell": {
                "cmd": "set -o pipefail; d={{ serveplan_models_root | quote }}; "
                'while [ ! -e "$d" ]; do d="$(dirname "$d")"; done; '
                "df -Pk \"$d\" | awk 'NR == 2 { print int($4 / 1048576) }'",
                "executable": "/bin/bash",
            },
            "register": "serveplan_disk",
            "changed_when": False,
            "check_mode": False,
            "when": "serveplan_to_fetch | length > 0",
        },
        check(
            "disk space for the weights",
            "serveplan_to_fetch | length == 0 or (serveplan_disk.stdout | int) >= "
            "(serveplan_to_fetch | map(attribute='disk_gib') | sum)",
            "{{ serveplan_models_root }} needs {{ serveplan_to_fetch | map(attribute='disk_gib') "
            "| sum }} GiB free for the weights",
        ),
        {
            "name": "Look for the Hugging Face CLI",
            "ansible.builtin.shell": {
                "cmd": "command -v hf || command -v huggingface-cli",
                "executable": "/bin/bash",
            },
            "register": "serveplan_hf_cli",
            "changed_when": False,
            "check_mode": False,
            "failed_when": False,
            "when": "serveplan_to_fetch | length > 0",
        },
        check(
            "Hugging Face CLI and token",
            [
                "serveplan_to_fetch | length == 0 or serveplan_hf_cli.rc == 0",
                "serveplan_to_fetch | length == 0 "
                "or serveplan_hf_token is match(serveplan_secret_pattern)",
            ],
            "fetching {{ serveplan_to_fetch | map(attribute='repo') | join(', ') }} needs the "
            "hf CLI (pip install -U huggingface_hub) and an HF token (vault_hf_token or HF_TOKEN)",
        ),
    ]


def _secret_and_clock_checks() -> list[dict[str, Any]]:
    """The API key, and the clock's synchronisation."""
    return [
        check(
            "API key",
            "serveplan_vllm_api_key is match(serveplan_secret_pattern)",
            "set vault_vllm_api_key in the vault (or VLLM_API_KEY in the environment)",
        ),
        probe(
            "Read the clock's synchronisation",
            ["timedatectl", "show", "--property=NTPSynchronized", "--value"],
            "serveplan_clock",
            failed_when=False,
        ),
        check(
            "clock sync",
            "serveplan_clock.stdout | trim == 'yes'",
            "the clock is not synchronised (timedatectl: enable chrony or systemd-timesyncd)",
        ),
    ]


def preflight_tasks(*, multi_host: bool) -> list[dict[str, Any]]:
    """Return the preflight tasks; the host's processes are `serveplan_processes`."""
    tasks = [
        *_engine_checks(),
        *_gpu_checks(),
        *_port_checks(),
        *(_nic_checks() if multi_host else []),
        *_weights_checks(),
        *_secret_and_clock_checks(),
    ]
    return [*tasks, refuse([t for t in tasks if t["name"].startswith("Check ")])]
