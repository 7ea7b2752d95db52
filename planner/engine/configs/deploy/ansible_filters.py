"""Ansible filters of the ServePlan playbook, shipped as filter_plugins/serveplan.py.

Plain Python with no imports beyond the standard library (it runs inside Ansible on the
controller): parsing nvidia-smi, /proc/net/tcp and `ray status`, composing a container's argv
from the allocation's data, and deciding what the targets API must be sent. The playbook keeps
its Jinja to calls of these.
"""

import hashlib
import ipaddress
import json
import re

RESTART_POLICY = "unless-stopped"
_LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp


def free_gpus(nvidia_smi_csv, utilization):
    """Indices of GPUs whose free memory covers the share vLLM takes of them.

    Input: `nvidia-smi --query-gpu=index,memory.free,memory.total --format=csv,noheader,nounits`.
    """
    free = []
    for line in str(nvidia_smi_csv).splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        if float(parts[1]) >= float(utilization) * float(parts[2]):
            free.append(int(parts[0]))
    return free


def driver_major(nvidia_smi_csv):
    """The lowest driver major version in `nvidia-smi --query-gpu=driver_version` output."""
    majors = [int(m.group(1)) for m in re.finditer(r"^\s*(\d+)\.", str(nvidia_smi_csv), re.M)]
    return min(majors) if majors else 0


def _listeners(proc_net_text):
    for line in str(proc_net_text).splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[3] != _LISTEN or ":" not in fields[1]:
            continue
        hex_addr, hex_port = fields[1].rsplit(":", 1)
        raw = bytes.fromhex(hex_addr)
        # /proc/net/tcp{,6} hold the address as 32-bit words in host (little-endian) order.
        packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
        yield ipaddress.ip_address(packed), int(hex_port, 16)


def busy_ports(proc_net_text, ports, addresses):
    """The `ports` something already listens on: on every address, or on one of `addresses`
    (this host's own: a listener there makes a 0.0.0.0 bind fail)."""
    mine = {ipaddress.ip_address(a) for a in addresses if _is_ip(a)}
    wanted = {int(p) for p in ports}
    busy = set()
    for address, port in _listeners(proc_net_text):
        if port in wanted and (address.is_unspecified or address in mine):
            busy.add(port)
    return sorted(busy)


def _is_ip(value):
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _volume_args(volumes, bundle_dir, models_root):
    args = []
    for v in volumes:
        root = {"models": models_root, "bundle": bundle_dir}.get(v["root"])
        source = v["source"] if root is None else f"{root.rstrip('/')}/{v['source']}".rstrip("/")
        args += ["-v", f"{source}:{v['target']}:ro"]
    return args


def run_argv(process, engine, bundle_dir, models_root, bundle_tag):
    """The full `ENGINE run` argv of a process's container, labelled with its config's hash."""
    options = ["--network", "host", "--ipc=host", "--env-file", f"{bundle_dir.rstrip('/')}/.env"]
    if process["gpus"]:
        options += ["--gpus", process["gpus"]]
    for cap in process["cap_add"]:
        options += ["--cap-add", cap]
    for name, value in process["env"].items():
        options += ["-e", f"{name}={value}"]
    options += _volume_args(process["volumes"], bundle_dir, models_root)
    if process["entrypoint"]:
        options += ["--entrypoint", process["entrypoint"]]
    tail = [process["image"], *process["command"]]
    digest = hashlib.sha256(json.dumps([options, tail]).encode()).hexdigest()[:16]
    head = [engine, "run", "-d", "--name", process["container"], "--restart", RESTART_POLICY]
    labels = ["--label", f"serveplan.bundle={bundle_tag}", "--label", f"serveplan.config={digest}"]
    return [*head, *labels, *options, *tail]


def config_label(argv):
    """The serveplan.config label a run argv sets."""
    for arg in argv:
        if str(arg).startswith("serveplan.config="):
            return str(arg).split("=", 1)[1]
    return ""


def running_configs(inspect_results):
    """Map each running container to its serveplan.config label, from a loop of
    `ENGINE inspect --format '{{json .Config.Labels}} {{.State.Running}}' NAME` results."""
    running = {}
    for result in inspect_results:
        out = str(result.get("stdout", "")).strip()
        if result.get("rc") != 0 or not out.endswith(" true"):
            continue
        labels = json.loads(out[: -len(" true")] or "{}") or {}
        running[result["item"]["container"]] = labels.get("serveplan.config", "")
    return running


def to_start(processes, running, engine, bundle_dir, models_root, bundle_tag):
    """The processes not running as planned: a container missing, stopped or with another
    config, and what runs inside such a container (vLLM on Ray, `serve deploy`)."""
    stale = set()
    for p in processes:
        if p["container"]:
            label = config_label(run_argv(p, engine, bundle_dir, models_root, bundle_tag))
            if running.get(p["container"]) != label:
                stale.add(p["container"])
    return [p for p in processes if (p["container"] or p["exec_in"]) in stale]


def ray_gpus(ray_status_text):
    """The cluster's total GPUs in `ray status` output (the `x/N GPU` usage line)."""
    totals = re.findall(r"[\d.]+/([\d.]+) GPU", str(ray_status_text))
    return float(totals[0]) if totals else 0.0


def target_action(found, target, plan):
    """What to send the targets API for one target, given its answer to GET ?name=NAME.

    Returns {"method": "POST"|"PATCH"|"", "path": "" or "ID/", "body": {...}}.
    """
    body = {
        "name": target["name"],
        "kind": target["kind"],
        "base_url": target["base_url"],
        "plan_scope": target["plan_scope"],
        "plan": plan,
    }
    rows = [r for r in (found or {}).get("results", []) if r.get("name") == target["name"]]
    if not rows:
        return {"method": "POST", "path": "", "body": body}
    row = rows[0]
    if all(row.get(k) == v for k, v in body.items()) and row.get("enabled", True):
        return {"method": "", "path": "", "body": {}}
    return {"method": "PATCH", "path": f"{row['id']}/", "body": {**body, "enabled": True}}


def disable_action(found, target):
    """What rollback sends for one target: disable it when it exists and is enabled."""
    rows = [r for r in (found or {}).get("results", []) if r.get("name") == target["name"]]
    if rows and rows[0].get("enabled", True):
        return {"method": "PATCH", "path": f"{rows[0]['id']}/", "body": {"enabled": False}}
    return {"method": "", "path": "", "body": {}}


def target_action_pair(pair, plan):
    """target_action over a (GET answer, target) pair, as `zip | map` gives them."""
    return target_action(pair[0], pair[1], plan)


def disable_action_pair(pair, plan=None):
    """disable_action over a (GET answer, target) pair."""
    return disable_action(pair[0], pair[1])


class FilterModule:
    def filters(self):
        return {
            "serveplan_free_gpus": free_gpus,
            "serveplan_driver_major": driver_major,
            "serveplan_busy_ports": busy_ports,
            "serveplan_run_argv": run_argv,
            "serveplan_config_label": config_label,
            "serveplan_running_configs": running_configs,
            "serveplan_to_start": to_start,
            "serveplan_ray_gpus": ray_gpus,
            "serveplan_target_action_pair": target_action_pair,
            "serveplan_disable_action_pair": disable_action_pair,
        }
