"""A Ray cluster's nodes by name, and the nodes it should have (to see a lost one).

Ray names a node by `IP:port` of its exporter; the dashboard's node list (kept in
`Target.info["nodes"]` at each poll) and the inventory (management address) give host names.
The expected nodes are the inventory machines linked to the target, else the linked plan's
hosts: a node that stops answering then shows as missing and raises an alert instead of the
cluster quietly reporting one node fewer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inventory.models import Machine
from monitoring.machines.hosts import short_hostname
from monitoring.models import Target
from monitoring.scrape.series import Sample
from planner.models import Plan


def _host(label: str) -> str:
    """The address part of `ip:port` or `[v6]:port`."""
    if label.startswith("["):
        return label[1:].split("]", 1)[0]
    return label.rsplit(":", 1)[0] if label.count(":") == 1 else label


def node_names(target: Target, labels: list[str]) -> dict[str, str]:
    """Return {node label: host name} from the dashboard's node list, else the inventory."""
    nodes = (target.info or {}).get("nodes", [])
    by_exporter = {n.get("exporter"): n.get("hostname") for n in nodes if n.get("hostname")}
    by_ip = {n.get("ip"): n.get("hostname") for n in nodes if n.get("hostname")}
    names = {}
    missing = []
    for label in labels:
        name = by_exporter.get(label) or by_ip.get(_host(label))
        if name:
            names[label] = name
        else:
            missing.append(label)
    if missing:
        # A node's own address: the exporter's host, or the node's `ip` label when Prometheus
        # names the exporter otherwise (a pod or DNS name: read-only targets).
        ip_of = {n.get("exporter"): n.get("ip") for n in nodes if n.get("ip")}
        address = {label: ip_of.get(label) or _host(label) for label in missing}
        inventory = dict(
            Machine.objects.filter(management_address__in=set(address.values())).values_list(
                "management_address", "hostname"
            )
        )
        for label in missing:
            names[label] = inventory.get(address[label], label)
    return names


def expected_machines(target: Target) -> list[tuple[str, str]]:
    """(host name, management address or "") of the nodes the cluster should have: its linked
    machines, else its plan's hosts (names only)."""
    linked = list(
        target.machines.order_by("hostname").values_list("hostname", "management_address")
    )
    if linked:
        return linked
    if target.plan_id is None:
        return []
    # Only the host names: every Ray poll asks, and the plan's row carries its whole result.
    hosts = Plan.objects.filter(pk=target.plan_id).values_list("hostnames", flat=True).first()
    return [(h, "") for h in sorted({str(h).lower() for h in hosts or []})]


def missing_hosts(
    target: Target, answering: Sequence[str], addresses: Sequence[str] = ()
) -> list[str]:
    """Expected host names whose node did not answer the last poll.

    A node answers for a machine by its host name (short names compared) or by the machine's
    management address (`addresses`: the answering exporters' `ip:port` labels): Ray names a
    node by the host's own name, which need not be the inventory's.
    """
    seen = {short_hostname(n) for n in answering}
    ips = {_host(a) for a in addresses}
    return [
        hostname
        for hostname, address in expected_machines(target)
        if short_hostname(hostname) not in seen and not (address and address in ips)
    ]


def poll_extras(target: Target, samples: list[Any], info: Mapping[str, Any]) -> list[Sample]:
    """ray.cluster.nodes_expected and nodes_missing for this poll (nothing without an expectation).

    A poll that failed altogether stores nothing: the target is down and says so.
    """
    expected = len(expected_machines(target))
    if not expected:
        return []
    scraped = next((s.value for s in samples if s.key == "ray.cluster.nodes_scraped"), 0.0)
    return [
        Sample("ray.cluster.nodes_expected", (), float(expected)),
        Sample("ray.cluster.nodes_missing", (), float(max(0, expected - int(scraped)))),
    ]
