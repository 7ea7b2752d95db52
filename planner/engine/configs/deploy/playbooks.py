"""site.yml, stop.yml and rollback.yml as typed data, dumped with the safe dumper.

The plays read the allocation from group_vars (inventory.py); each process of a host is one
loop item. Stages are tagged (preflight, install, weights, services, health, smoke, register);
every probe runs under --check, every change is skipped by it.
"""

from __future__ import annotations

from typing import Any

from planner.engine.configs.allocation import ProcessKind
from planner.engine.configs.deploy.containers import PHASES
from planner.engine.configs.deploy.preflight import engine_task, preflight_tasks

HOSTS = "serveplan"  # the inventory group
_ENV = "{{ serveplan_environment }}"
_ARGV = (
    "{{ item | serveplan_run_argv(serveplan_engine, serveplan_dir, serveplan_models_root, "
    "serveplan_bundle_tag) }}"
)
_TARGETS_URL = "{{ serveplan_url | regex_replace('/$', '') }}/api/v1/monitoring/targets/"
_AUTH = {"Authorization": "Token {{ serveplan_api_token }}"}
_REGISTERING = "serveplan_url and serveplan_plan and serveplan_api_token"


def _play(
    name: str, tags: list[str], tasks: list[dict[str, Any]], *, hosts: str = HOSTS, **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "hosts": hosts,
        "gather_facts": False,
        "environment": _ENV,
        "tags": tags,
        **extra,
        "tasks": tasks,
    }


def _phase_tasks(
    phase: int, kinds: set[ProcessKind], *, shares_gpus: bool = False
) -> list[dict[str, Any]]:
    """Return the tasks that start one phase's processes on every host."""
    mine = f"serveplan_to_start | selectattr('phase', 'equalto', {phase})"
    tasks: list[dict[str, Any]] = []
    if kinds & {k for k, p in PHASES.items() if p == phase and k is not ProcessKind.SERVE_DEPLOY}:
        tasks += [
            {
                "name": f"Remove phase {phase} containers that run another configuration",
                "ansible.builtin.command": {
                    "argv": ["{{ serveplan_engine }}", "rm", "-f", "{{ item.container }}"]
                },
                "loop": "{{ "
                + mine
                + " | selectattr('container', 'in', serveplan_existing) | list }}",
                "loop_control": {"label": "{{ item.container }}"},
                "changed_when": True,
            },
            {
                "name": f"Start phase {phase} containers with a restart policy",
                "ansible.builtin.command": {"argv": _ARGV},
                "loop": "{{ " + mine + " | selectattr('container') | list }}",
                "loop_control": {"label": "{{ item.container }}"},
                "changed_when": True,
            },
        ]
        if shares_gpus and phase == PHASES[ProcessKind.VLLM]:
            tasks[-1:] = _shared_gpu_start_tasks(mine)
    if phase == PHASES[ProcessKind.VLLM] and ProcessKind.RAY_HEAD in kinds:
        tasks.insert(0, _ray_wait_task())
    exec_kinds = [ProcessKind.VLLM] if phase == PHASES[ProcessKind.VLLM] else []
    if phase == PHASES[ProcessKind.SERVE_DEPLOY]:
        exec_kinds = [ProcessKind.SERVE_DEPLOY]
    if exec_kinds == [ProcessKind.VLLM] and ProcessKind.RAY_HEAD in kinds:
        tasks += _ray_servers_tasks(phase)
    elif exec_kinds and ProcessKind.RAY_HEAD in kinds:
        tasks.append(
            {
                "name": f"Run phase {phase} commands on the Ray cluster",
                "ansible.builtin.command": {
                    "argv": "{{ [serveplan_engine, 'exec', item.exec_in] + item.command }}"
                },
                "loop": "{{ " + mine + " | selectattr('exec_in') | list }}",
                "loop_control": {"label": "{{ item.name }}"},
                "changed_when": True,
            }
        )
    return tasks


def _shared_gpu_start_tasks(mine: str) -> list[dict[str, Any]]:
    """Return the vLLM start tasks of a bundle whose servers share GPUs: the first server of
    each GPU starts, serves, then the second starts beside it."""
    start: dict[str, Any] = {
        "ansible.builtin.command": {"argv": _ARGV},
        "loop_control": {"label": "{{ item.container }}"},
        "changed_when": True,
    }
    return [
        {
            "name": "Start the first server of every GPU with a restart policy",
            **start,
            "loop": "{{ " + mine + " | selectattr('container') | rejectattr('waits_for') | list }}",
        },
        {
            "name": "Wait until the first server of each shared GPU serves",
            "ansible.builtin.uri": {"url": "{{ item }}", "status_code": 200, "timeout": 10},
            "loop": "{{ "
            + mine
            + " | selectattr('waits_for') | map(attribute='waits_for') | unique | list }}",
            "register": "serveplan_partner",
            "until": "serveplan_partner.status == 200",
            "retries": "{{ serveplan_health_retries }}",
            "delay": "{{ serveplan_health_delay_s }}",
            "when": "not ansible_check_mode",  # nothing was started
        },
        {
            "name": "Start the second server of each shared GPU with a restart policy",
            **start,
            "loop": "{{ " + mine + " | selectattr('container') | selectattr('waits_for') | list }}",
        },
    ]


def _ray_servers_tasks(phase: int) -> list[dict[str, Any]]:
    """Return the tasks that (re)start vLLM inside the Ray container: it has no restart policy
    of its own, so every run starts the servers that do not answer."""
    return [
        {
            "name": "Probe the vLLM servers that run on the Ray cluster",
            "ansible.builtin.uri": {"url": "{{ item.health_urls[0] }}", "timeout": 5},
            "loop": "{{ serveplan_processes | selectattr('exec_in') "
            "| selectattr('kind', 'equalto', 'vllm') | list }}",
            "loop_control": {"label": "{{ item.name }}"},
            "register": "serveplan_ray_servers",
            "failed_when": False,
            "when": "not ansible_check_mode",
        },
        {
            "name": f"Start phase {phase} vLLM servers on the Ray cluster that do not answer",
            "ansible.builtin.command": {
                "argv": "{{ [serveplan_engine, 'exec', '-d', item.exec_in] + item.command }}"
            },
            "loop": "{{ serveplan_ray_servers.results | default([]) "
            "| rejectattr('status', 'defined') | map(attribute='item') | list "
            "+ serveplan_ray_servers.results | default([]) "
            "| selectattr('status', 'defined') | rejectattr('status', 'equalto', 200) "
            "| map(attribute='item') | list }}",
            "loop_control": {"label": "{{ item.name }}"},
            "changed_when": True,
        },
    ]


def _ray_wait_task() -> dict[str, Any]:
    return {
        "name": "Wait until the Ray cluster lists every node's GPUs",
        "ansible.builtin.command": {
            "argv": ["{{ serveplan_engine }}", "exec", "{{ serveplan_ray_head }}", "ray", "status"]
        },
        "register": "serveplan_ray_status",
        "until": "(serveplan_ray_status.stdout | serveplan_ray_gpus) >= serveplan_ray_gpus_total",
        "retries": "{{ serveplan_health_retries }}",
        "delay": "{{ serveplan_health_delay_s }}",
        "changed_when": False,
        "when": "serveplan_ray_head and serveplan_to_start | length > 0 and not ansible_check_mode",
    }


def _install_tasks() -> list[dict[str, Any]]:
    """The bundle's directory, its files, and .env with the vault's secrets."""
    return [
        {
            "name": "Create the bundle directory",
            "ansible.builtin.file": {
                "path": "{{ serveplan_dir }}",
                "state": "directory",
                "mode": "0755",
            },
        },
        {
            "name": "Copy the bundle's files",
            "ansible.builtin.copy": {
                "src": "{{ playbook_dir }}/{{ item }}",
                "dest": "{{ serveplan_dir }}/{{ item }}",
                "mode": "{{ '0755' if item.endswith('.sh') else '0644' }}",
            },
            "loop": "{{ serveplan_files }}",
        },
        {
            "name": "Write .env with the secrets from the vault (readable by root only)",
            "ansible.builtin.copy": {
                "content": "{{ lookup('ansible.builtin.file', playbook_dir ~ '/.env') "
                "| regex_replace('(?m)^(HF_TOKEN|VLLM_API_KEY)=\\n?', '') }}\n"
                "HF_TOKEN={{ serveplan_hf_token }}\nVLLM_API_KEY={{ serveplan_vllm_api_key }}\n",
                "dest": "{{ serveplan_dir }}/.env",
                "mode": "0600",
            },
            "no_log": True,
        },
    ]


def _weights_tasks() -> list[dict[str, Any]]:
    """Each repository fetched once into the path the servers load, then marked complete."""
    return [
        {
            "name": "Fetch each repository once into the path the servers load",
            "ansible.builtin.command": {
                "argv": [
                    "{{ serveplan_hf_cli.stdout_lines[0] }}",
                    "download",
                    "{{ item.repo }}",
                    "--local-dir",
                    "{{ serveplan_models_root }}/{{ item.dir_name }}",
                ],
                "creates": "{{ serveplan_models_root }}/{{ item.dir_name }}/{{ serveplan_marker }}",
            },
            "environment": {"HF_TOKEN": "{{ serveplan_hf_token }}"},
            "loop": "{{ serveplan_to_fetch }}",
            "no_log": True,
        },
        {
            "name": "Mark each fetched repository complete",
            "ansible.builtin.copy": {
                "content": "{{ item.repo }}\n",
                "dest": "{{ serveplan_models_root }}/{{ item.dir_name }}/{{ serveplan_marker }}",
                "mode": "0644",
            },
            "loop": "{{ serveplan_to_fetch }}",
            "loop_control": {"label": "{{ item.path }}"},
        },
    ]


def _services_tasks(kinds: set[ProcessKind], *, shares_gpus: bool) -> list[dict[str, Any]]:
    """The containers that exist noted, then each phase's services started in order."""
    tasks: list[dict[str, Any]] = [
        {
            "name": "Note the containers that exist",
            "ansible.builtin.set_fact": {
                "serveplan_existing": "{{ serveplan_inspected.results "
                "| selectattr('rc', 'equalto', 0) "
                "| map(attribute='item.container') | list }}"
            },
        }
    ]
    for phase in sorted({PHASES[k] for k in kinds}):
        tasks += _phase_tasks(phase, kinds, shares_gpus=shares_gpus)
    return tasks


def _health_tasks() -> list[dict[str, Any]]:
    """Wait until every service answers (nothing was started in check mode)."""
    return [
        {
            "name": "Wait until every service answers",
            "ansible.builtin.uri": {"url": "{{ item }}", "status_code": 200, "timeout": 10},
            "loop": "{{ serveplan_processes | map(attribute='health_urls') | flatten }}",
            "register": "serveplan_health",
            "until": "serveplan_health.status == 200",
            "retries": "{{ serveplan_health_retries }}",
            "delay": "{{ serveplan_health_delay_s }}",
            "when": "not ansible_check_mode",  # nothing was started
        }
    ]


def _smoke_tasks() -> list[dict[str, Any]]:
    """One completion from every server, balancer and Serve proxy; all must succeed."""
    return [
        {
            "name": "Ask every server, balancer and Serve proxy for one completion",
            "ansible.builtin.uri": {
                "url": "{{ item.base_url }}/v1/completions",
                "method": "POST",
                "headers": {"Authorization": "Bearer {{ serveplan_vllm_api_key }}"},
                "body_format": "json",
                "body": "{{ item.body }}",
                "status_code": [200, 400, 401, 403, 404, 500, 502, 503],
                "timeout": 120,
            },
            "loop": "{{ serveplan_smoke }}",
            "register": "serveplan_smoke_answers",
            "no_log": True,
        },
        {
            "name": "Check every completion succeeded",
            "ansible.builtin.assert": {
                "that": "serveplan_smoke_answers.results | rejectattr('status', 'equalto', 200) "
                "| list | length == 0",
                "fail_msg": "smoke test failed for {{ serveplan_smoke_answers.results "
                "| rejectattr('status', 'equalto', 200) | map(attribute='item.label') "
                "| join(', ') }}",
                "quiet": True,
            },
        },
    ]


def site_playbook(
    kinds: set[ProcessKind], *, multi_host: bool, shares_gpus: bool = False
) -> list[dict[str, Any]]:
    """Return site.yml: preflight, install, weights, services, health, smoke, register.

    With `shares_gpus`, the second server of each shared GPU starts once the first serves."""
    return [
        _play(
            "Preflight every host before touching anything",
            ["preflight", "always"],
            preflight_tasks(multi_host=multi_host),
            any_errors_fatal=True,
        ),
        _play("Install the bundle and its secrets", ["install"], _install_tasks()),
        _play("Fetch the weights once per host", ["weights"], _weights_tasks()),
        _play(
            "Start the services in the allocation's order",
            ["services"],
            _services_tasks(kinds, shares_gpus=shares_gpus),
        ),
        _play("Wait for health", ["health"], _health_tasks()),
        # From the first host: it reaches every server and balancer as the clients will.
        _play(
            "Smoke test from the first host",
            ["smoke"],
            [{**task, "when": "not ansible_check_mode"} for task in _smoke_tasks()],
            hosts=f"{HOSTS}[0]",
        ),
        # From the controller: it reaches ServePlan, the hosts may not.
        _play(
            "Register the servers in ServePlan's monitoring",
            ["register"],
            _register_tasks(),
            hosts="localhost",
        ),
    ]


def _lookup_targets(label: str) -> dict[str, Any]:
    return {
        "name": f"Look up the targets {label}",
        "ansible.builtin.uri": {
            "url": _TARGETS_URL + "?name={{ item.name | urlencode }}",
            "headers": _AUTH,
            "return_content": True,
        },
        "loop": "{{ serveplan_targets }}",
        "loop_control": {"label": "{{ item.name }}"},
        "register": "serveplan_found",
        "check_mode": False,
        "no_log": True,
    }


def _send_actions(name: str, action_filter: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "Work out what the API must be sent",
            "ansible.builtin.set_fact": {
                "serveplan_actions": "{{ serveplan_found.results | map(attribute='json') "
                f"| zip(serveplan_targets) | map('{action_filter}', serveplan_plan) | list }}}}"
            },
        },
        {
            "name": name,
            "ansible.builtin.uri": {
                "url": _TARGETS_URL + "{{ item.path }}",
                "method": "{{ item.method }}",
                "headers": _AUTH,
                "body_format": "json",
                "body": "{{ item.body }}",
                "status_code": [200, 201],
            },
            "loop": "{{ serveplan_actions | selectattr('method') | list }}",
            "changed_when": True,
            "no_log": True,
        },
    ]


def _register_tasks() -> list[dict[str, Any]]:
    tasks = [
        {
            "name": "Say why registration is skipped",
            "ansible.builtin.debug": {
                "msg": "Set serveplan_url, serveplan_plan and vault_serveplan_api_token (or "
                "SERVEPLAN_API_TOKEN) to register the targets; register.sh does the same."
            },
            "when": "not (" + _REGISTERING + ")",
        },
        _lookup_targets("by name"),
        *_send_actions(
            "Create or re-link each target to this plan", "serveplan_target_action_pair"
        ),
        {
            "name": "Show where to watch",
            "ansible.builtin.debug": {
                "msg": "Plan vs reality: {{ serveplan_url | regex_replace('/$', '') }}"
                "/monitoring/plans/{{ serveplan_plan }}/reality/"
            },
        },
    ]
    return [
        tasks[0],
        {"name": "Register with ServePlan", "when": _REGISTERING, "block": tasks[1:]},
    ]


def stop_playbook() -> list[dict[str, Any]]:
    """Return stop.yml: every container of the bundle removed, files and weights kept."""
    tasks = [
        engine_task(),
        {
            "name": "Remove this bundle's containers",
            "ansible.builtin.command": {
                "argv": [
                    "{{ serveplan_engine_path.stdout_lines[0] | basename }}",
                    "rm",
                    "-f",
                    "{{ item.container }}",
                ]
            },
            "loop": "{{ serveplan_processes | selectattr('container') | reverse | list }}",
            "loop_control": {"label": "{{ item.container }}"},
            "register": "serveplan_removed",
            "changed_when": "serveplan_removed.rc == 0 and serveplan_removed.stdout | length > 0",
            "failed_when": "serveplan_removed.rc != 0 "
            "and 'No such' not in serveplan_removed.stderr",
        },
    ]
    return [_play("Stop every service of the bundle", ["stop"], tasks)]


def rollback_playbook() -> list[dict[str, Any]]:
    """Return rollback.yml: stop, delete the bundle directory (its .env holds the secrets),
    disable the targets in ServePlan; the weights stay for the next bundle."""
    remove = [
        {
            "name": "Delete the bundle directory and its secrets",
            "ansible.builtin.file": {"path": "{{ serveplan_dir }}", "state": "absent"},
        },
    ]
    disable = [
        {
            "name": "Disable the targets in ServePlan",
            "when": _REGISTERING,
            "block": [
                _lookup_targets("to disable"),
                *_send_actions("Disable each target", "serveplan_disable_action_pair"),
            ],
        },
    ]
    return [
        {"name": "Stop the bundle", "ansible.builtin.import_playbook": "stop.yml"},
        _play("Remove what the bundle installed", ["rollback"], remove),
        _play("Disable the targets from the controller", ["rollback"], disable, hosts="localhost"),
    ]
