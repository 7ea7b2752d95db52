"""The bundle's README in the reader's language: the order of operations for an ops engineer.

Prerequisites, the one command (Ansible), what success looks like, the same steps without
Ansible, the balancer choice, health checks, what to watch first, stop and roll back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

_TABLE_KEYS = (
    "host",
    "address",
    "process",
    "kind",
    "gpus",
    "ports",
    "replica",
    "rank",
    "peer",
    "container",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadmeLinks:
    """Where the plan's pages are (absolute when the site's URL is known)."""

    plan: str = ""
    reality: str = ""
    targets: str = ""


def _hosts_of(bundle: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((bundle.get("allocation") or {}).get("hosts") or [])


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return f"`{text}`" if text else "—"


def allocation_rows(bundle: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return one row per process: the allocation table the result page and README show."""
    rows = []
    for h in _hosts_of(bundle):
        for p in h.get("processes") or []:
            rows.append(
                {
                    "host": h["host"],
                    "address": h.get("address") or h["host"],
                    "process": p.get("name"),
                    "kind": p.get("kind"),
                    "gpus": p.get("cuda_visible_devices") or "",
                    "ports": ", ".join(str(x) for x in p.get("ports") or []),
                    "replica": p.get("replica"),
                    "rank": (
                        f"{p['node_rank']}/{p['nnodes']}" if p.get("node_rank") is not None else ""
                    ),
                    "peer": p.get("peer") or "",
                    "container": p.get("container") or "",
                }
            )
    return rows


def _step_text(step: Mapping[str, Any]) -> str:
    script = step["script"]
    processes = ", ".join(f"`{p}`" for p in step.get("processes") or [])
    if step["kind"] == "launch":
        return _(
            "On `%(host)s`: `./%(script)s` (or `./%(script)s --docker`); starts %(procs)s."
        ) % {
            "host": step["host"],
            "script": script,
            "procs": processes,
        }
    if step["kind"] == "serve":
        return _(
            "On `%(host)s`, once `ray status` lists every node's GPUs: `./%(script)s` "
            "(or with `--docker`); starts %(procs)s."
        ) % {"host": step["host"], "script": script, "procs": processes}
    return _("On `%(host)s`: `./%(script)s` (or with `--docker`).") % {
        "host": step["host"],
        "script": script,
    }


def _table(bundle: Mapping[str, Any]) -> list[str]:
    out = [
        "## " + _("Allocation table"),
        "",
        _(
            "Every process, the GPUs it sees (`CUDA_VISIBLE_DEVICES`), its ports, ranks, the "
            "address it joins and its container name (with `--docker`)."
        ),
        "",
        "| "
        + " | ".join(
            (
                pgettext("allocation table column", "host"),
                pgettext("allocation table column", "address"),
                pgettext("allocation table column", "process"),
                pgettext("allocation table column", "kind"),
                "`CUDA_VISIBLE_DEVICES`",
                pgettext("allocation table column", "ports"),
                pgettext("allocation table column", "replica"),
                pgettext("allocation table column", "node rank"),
                pgettext("allocation table column", "joins"),
                pgettext("allocation table column", "container"),
            )
        )
        + " |",
        "|" + "---|" * 10,
    ]
    for row in allocation_rows(bundle):
        out.append("| " + " | ".join(_cell(row[key]) for key in _TABLE_KEYS) + " |")
    for s in (bundle.get("allocation") or {}).get("serve") or []:
        out.append("")
        replicas = ngettext(
            "Serve application `%(app)s`: %(low)s to %(high)s replica",
            "Serve application `%(app)s`: %(low)s to %(high)s replicas",
            s["max_replicas"],
        ) % {"app": s["application"], "low": s["min_replicas"], "high": s["max_replicas"]}
        gpus = ngettext(
            # Starts with the space English puts between the two halves; Chinese puts none.
            " of %(gpus)s GPU each; every bound fits the cluster's GPUs.",
            " of %(gpus)s GPUs each; every bound fits the cluster's GPUs.",
            s["gpus_per_replica"],
        ) % {"gpus": s["gpus_per_replica"]}
        out.append(replicas + gpus)
    return out


def _prerequisites(bundle: Mapping[str, Any]) -> list[str]:
    served = bundle.get("served") or []
    disk = sum(float(m.get("weights_gib") or 0) for m in served)
    out = ["", "## " + _("Prerequisites"), ""]
    out.append(
        "- "
        + _(
            "Every host: an NVIDIA driver of 535 or newer, docker or podman with the NVIDIA "
            "container toolkit, a synchronised clock (chrony or systemd-timesyncd), the ports "
            "of the table free, and %(gib)s GiB free under `/models` for the weights."
        )
        % {"gib": f"{disk:.0f}"}
    )
    out.append(
        "- "
        + _(
            "Secrets, never in a plain file: a Hugging Face read token (gated models), the API "
            "key clients send (`Authorization: Bearer`), and a ServePlan API token of a planner "
            "(registration). With Ansible they live in a vault; without, in `.env` on each "
            "host (`chmod 600 .env`), which no other file repeats."
        )
    )
    for m in served:
        if not m.get("repo"):
            out.append(
                "- " + _("Put the quantized checkpoint at `%(path)s`.") % {"path": m["path"]}
            )
    partly = bundle.get("partly_free_hosts") or []
    if partly:
        out.append(
            "- "
            + _(
                "Shared pool: on %(hosts)s the plan uses only the free GPUs, numbered from 0 in "
                "the table. Check `nvidia-smi` and, if other GPUs are the free ones, change "
                "`CUDA_VISIBLE_DEVICES` and `--gpus` in that host's scripts to them (same count)."
            )
            % {"hosts": ", ".join(f"`{h}`" for h in partly)}
        )
    return out


def _one_command(links: ReadmeLinks) -> list[str]:
    out = ["", "## " + _("One command: Ansible"), ""]
    out.append(
        _(
            "From a machine that reaches the hosts over SSH and ServePlan over HTTP, in this "
            "directory:"
        )
    )
    out += [
        "",
        "```",
        "ansible-vault create group_vars/all/vault.yml   # "
        + _("vault_hf_token, vault_vllm_api_key, vault_serveplan_api_token"),
        "ansible-playbook site.yml --ask-vault-pass --check   # " + _("preflight only"),
        "ansible-playbook site.yml --ask-vault-pass",
        "```",
        "",
        _(
            "`site.yml` checks every host first (driver, GPUs and free memory, ports, NCCL "
            "interface and speed, disk, container engine, clock, secrets) and stops before "
            "touching anything, naming the host and the check. Then it installs the bundle, "
            "fetches the weights once per host, starts every process as a container that "
            "restarts (`--restart unless-stopped`), waits for health, asks each server and "
            "balancer for one completion and registers the servers, GPU exporters and Ray "
            "cluster in ServePlan, linked to this plan. Stages are tags: `preflight`, "
            "`install`, `weights`, `services`, `health`, `smoke`, `register`."
        ),
        "",
        "### " + _("What success looks like"),
        "",
        "- " + _("The recap shows `failed=0` on every host; a second run shows `changed=0`."),
        "- " + _("The smoke test passes: every server and balancer answered a completion."),
    ]
    if links.reality:
        out.append(
            "- "
            + _("The targets appear linked to the plan: [plan vs reality](%(url)s).")
            % {"url": links.reality}
        )
    return out


def _balancer(bundle: Mapping[str, Any]) -> list[str]:
    nginx = [r["host"] for r in allocation_rows(bundle) if r["kind"] == "nginx"]
    if not nginx:
        return []
    return [
        "",
        "## " + _("The balancer: choose how clients reach it"),
        "",
        _(
            "Each of %(hosts)s runs an Nginx that balances every replica (port 80): a failed "
            "server drops out of rotation on all of them. The bundle gives no single address "
            "that survives the loss of a host; choose one:"
        )
        % {"hosts": ", ".join(f"`{h}`" for h in nginx)},
        "",
        "- "
        + _(
            "a virtual IP with keepalived (VRRP) across these hosts: the address moves to a "
            "live one within seconds;"
        ),
        "- "
        + _(
            "DNS round robin over their addresses: clients must retry another address, and "
            "removing a dead host waits for the DNS TTL;"
        ),
        "- " + _("your own load balancer in front of their port 80."),
        "",
        _(
            "Without one of these, clients use one Nginx's address, and the endpoint fails "
            "with that host."
        ),
    ]


def _router(bundle: Mapping[str, Any]) -> list[str]:
    rows = [r for r in allocation_rows(bundle) if r["kind"] == "router"]
    if not rows:
        return []
    return [
        "",
        "## " + _("One endpoint for every model: the LiteLLM proxy"),
        "",
        _(
            "`%(host)s` runs a LiteLLM proxy on port %(port)s: clients send every request "
            "there, and it forwards each to a server of the model named in the request's "
            "`model` field (litellm.yaml lists every server; a model's replicas are balanced). "
            "Clients send VLLM_API_KEY as the bearer key; the proxy checks it and passes it on."
        )
        % {"host": rows[0]["host"], "port": rows[0]["ports"]},
        "",
        _(
            "Why LiteLLM: it routes by the `model` field natively, from a plain model list, "
            "and it is widely deployed in front of vLLM. It is also the least proven part of "
            "this bundle: ServePlan's tests check litellm.yaml's shape and the scripts that "
            "start it, but do not run LiteLLM itself. Send one request per model through it "
            "(smoke-test.sh does) before you point clients at it."
        ),
    ]


def _scripts(bundle: Mapping[str, Any]) -> list[str]:
    steps = list(bundle.get("steps") or [])
    out = ["", "## " + _("Steps, in order"), ""]
    out.append(
        "1. "
        + _(
            "Without Ansible: copy this directory to the same path on every host listed above, "
            "fill in `HF_TOKEN` and `VLLM_API_KEY` in its `.env` and `chmod 600 .env`; then "
            "run `./fetch-weights.sh` on every host (once: it skips what is fetched)."
        )
    )
    n = 2
    for step in steps:
        if step["kind"] == "check":
            continue
        out.append(f"{n}. " + _step_text(step))
        n += 1
    kv = ", ".join(str(k) for k in bundle.get("kv_tokens_per_replica") or [])
    out.append(
        f"{n}. "
        + _(
            "Wait for `Application startup complete` in each vLLM log (`journalctl -u "
            "serveplan-<process>`, or `docker logs <container>`), and check that `GPU KV cache "
            "size` is near the planned %(kv)s tokens per replica."
        )
        % {"kv": kv}
    )
    n += 1
    out.append(
        f"{n}. "
        + _(
            "Run `./smoke-test.sh`, then `SERVEPLAN_API_TOKEN=... ./register.sh` (it reads "
            "`serveplan.env`) to register the targets linked to this plan."
        )
    )
    out.append(
        "   "
        + _(
            "Processes run as transient systemd units (restarted when they fail) or, with "
            "`--docker`, as containers with `--restart unless-stopped`."
        )
    )
    if bundle.get("route") == "B" and bundle.get("backend") == "ray":
        out.append(
            "   "
            + _(
                "With containers, vLLM runs inside the Ray head's container (`docker exec`): "
                "nothing restarts it alone. Watch its target, and rerun the serve step (or "
                "`site.yml`) when it stops; the host-mode unit restarts it."
            )
        )
    return out


def _watch(bundle: Mapping[str, Any], links: ReadmeLinks) -> list[str]:
    out = ["", "## " + _("What to watch first"), ""]
    for label, url in (
        (_("the plan"), links.plan),
        (_("plan vs reality"), links.reality),
        (_("the monitoring targets"), links.targets),
    ):
        if url:
            out.append(f"- [{label}]({url})")
    out.append(
        "- "
        + _(
            "Record start-up time, TTFT, inter-token latency and completion rate under load, "
            "then run a failure drill (stop one worker, time until the next successful request)."
        )
    )
    return out


def _stop_and_roll_back(bundle: Mapping[str, Any]) -> list[str]:
    out = ["", "## " + _("Health checks"), ""]
    out.append(
        _(
            "Each `check-<host>.sh` runs `nvidia-smi` on the host's GPUs, `curl /health` on its "
            "vLLM and Nginx ports, `ray status` and `serve status` on a Ray head, and exits "
            "non-zero when one fails."
        )
    )
    out.append("")
    out += [
        f"- {_step_text(step)}" for step in bundle.get("steps") or [] if step["kind"] == "check"
    ]
    out += ["", "## " + pgettext("operator README section: stopping the deployment", "Stop"), ""]
    out.append(
        _(
            "With Ansible: `ansible-playbook stop.yml`. Otherwise run `./stop-<host>.sh` (with "
            "`--docker` if you started containers) on every host, in the reverse order of the "
            "steps: the Ray head or node-rank 0 last."
        )
    )
    out += ["", *(f"- `./stop-{h['host']}.sh`" for h in reversed(_hosts_of(bundle)))]
    out += ["", "## " + _("Roll back"), ""]
    out.append(
        _(
            "With Ansible: `ansible-playbook rollback.yml` removes the containers, deletes the "
            "bundle directory with its `.env` and disables the targets in ServePlan (the "
            "weights stay); then run the previous bundle's `site.yml`. Without: keep the "
            "previous bundle's directory, stop this bundle as above, then run the previous "
            "bundle's scripts in the order of its README and its checks."
        )
    )
    if bundle.get("route") == "C":
        out += [
            "",
            _(
                "On an unchanged Ray cluster, `serve deploy` of the previous `serve.yaml` is "
                "enough: Serve replaces the applications in place."
            ),
        ]
    return out


def bundle_readme(
    bundle: Mapping[str, Any],
    *,
    links: ReadmeLinks | None = None,
    extra_files: tuple[str, ...] = (),
) -> str:
    """Return the operator README: prerequisites, one command, success, steps, balancer,
    health checks, what to watch, stop and roll back."""
    links = links or ReadmeLinks()
    route, backend = bundle.get("route", ""), bundle.get("backend", "")
    out = [
        "# "
        + _("Deploying %(models)s — route %(route)s, backend %(backend)s")
        % {"models": ", ".join(bundle.get("models") or []), "route": route, "backend": backend},
        "",
        _("Layout `%(labels)s`; image `%(image)s`: pin the same image on every host.")
        % {"labels": ", ".join(bundle.get("labels") or []), "image": bundle.get("image", "")},
        "",
        *_table(bundle),
        *_prerequisites(bundle),
        *_one_command(links),
        *_scripts(bundle),
        *_balancer(bundle),
        *_router(bundle),
        *_watch(bundle, links),
        *_stop_and_roll_back(bundle),
        "",
        "## " + _("Files in this archive"),
        "",
    ]
    names = sorted({*(bundle.get("files") or {}), *extra_files})
    out += [f"- `{name}`" for name in names]
    return "\n".join(out) + "\n"
