"""Resolve a user's spec (catalog/inventory slugs, hostnames, a pool, the fleet) into engine input.

Fetch, then compute: every inventory row the engine needs is read here, in a handful of
queries, and turned into the plain dict `planner.engine.spec.spec_from_dict` accepts. The
engine itself never touches the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from catalog.architecture_json import architecture_to_json
from catalog.data import load_models
from core.json_input import nul_paths
from inventory.models import Machine, MachineStatus, ModelSpec, NetworkInterface, Pool
from inventory.selectors import model_spec_architecture
from planner.engine.spec import SpecError

# Keys of the user spec that select machines from the inventory; the engine never sees them.
INVENTORY_KEYS = (
    "hostnames",
    "pool",
    "fleet",
    "free_gpus",
    "link_override",
    "machine_count",
    "gpu_override",
)
MAX_WHAT_IF_MACHINES = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedSpec:
    """The engine's input dict plus what the planner stores beside it."""

    engine_input: dict[str, Any]
    model_slug: str
    hostnames: list[str] = field(default_factory=list)
    pool_kind: str = "dedicated"
    # Pool kind of every offered machine when the user did not state one: the kind that counts
    # is that of the machines the engine chooses (see plans.plan_evaluate).
    pool_kind_by_host: dict[str, str] = field(default_factory=dict)

    def pool_kind_of(self, hosts: Iterable[str]) -> str:
        """Return the pool kind of the machines `hosts`, as the engine derives it
        (planner.engine.plan.with_pool_kind_of): shared when any of them is."""
        hosts = tuple(hosts)
        if not self.pool_kind_by_host or not hosts:
            return self.pool_kind
        kinds = {self.pool_kind_by_host.get(h, self.pool_kind) for h in hosts}
        return "shared" if "shared" in kinds else "dedicated"


def _model_from_inventory(row: ModelSpec) -> dict[str, Any]:
    """Return the engine's `model` object for an inventory model spec: its Architecture, whole.

    The inventory already holds the model as an Architecture (its stored config.json for what
    has no column, the user's column edits winning): it goes to the engine as it is, by the
    Architecture's own field names (catalog.architecture_json), never as a config.json made up
    and parsed back.
    """
    return {
        "slug": row.slug,
        "name": row.name,
        "hf_repo": row.hf_repo,
        "architecture": architecture_to_json(model_spec_architecture(row)),
    }


def resolve_model(raw: Any, errors: dict[str, str]) -> tuple[Any, str]:
    """Return (engine model object, slug): inventory ModelSpec first, then the catalog."""
    if isinstance(raw, str):
        raw = {"slug": raw}
    if not isinstance(raw, Mapping):
        errors["model"] = "required: a model slug or {'hf_config': {...}}"
        return raw, ""
    if "hf_config" in raw or "architecture" in raw:
        return dict(raw), str(raw.get("slug") or "")
    slug = str(raw.get("slug") or "").strip()
    if not slug:
        errors["model.slug"] = "required: a model slug from the catalog or the inventory"
        return raw, ""
    found = list(ModelSpec.objects.filter(slug=slug)[:1])
    row = found[0] if found else None
    if row is not None:
        return _model_from_inventory(row), slug
    if slug in load_models():
        return {"slug": slug}, slug
    known = sorted(set(load_models()) | set(ModelSpec.objects.values_list("slug", flat=True)))
    errors["model.slug"] = f"unknown model slug {slug!r}; known: {', '.join(known)}"
    return raw, slug


_MACHINE_FIELDS = (
    "id",
    "hostname",
    "management_address",
    "gpu_count",
    "interconnect",
    "pool__kind",
    "gpu_type__slug",
    "gpu_type__name",
    "gpu_type__memory_gib",
    "gpu_type__driver_visible_gib",
    "gpu_type__hbm_bandwidth_gbs",
    "gpu_type__bf16_dense_tflops",
    "gpu_type__fp8_support",
    "gpu_type__nvlink_bandwidth_gbs",
    "gpu_type__vendor",
)


def machine_rows(machines: QuerySet[Machine]) -> list[dict[str, Any]]:
    """Return machines as plain rows with their GPU figures and NICs, in two queries.

    Plain values rather than model instances: resolving is on the API's hot path (issue 4 allows
    the endpoint 20 ms on top of the engine).
    """
    rows = list(machines.order_by("hostname").values(*_MACHINE_FIELDS))
    nics: dict[int, list[dict[str, Any]]] = {}
    if rows:
        for nic in (
            NetworkInterface.objects.filter(machine_id__in=[r["id"] for r in rows])
            .order_by("machine_id", "name")
            .values("machine_id", "name", "speed_gbps", "kind", "role")
        ):
            nics.setdefault(nic.pop("machine_id"), []).append(nic)
    for row in rows:
        row["nics"] = nics.get(row["id"], [])
    return rows


def row_to_node(
    row: Mapping[str, Any],
    *,
    free_gpus: int | None = None,
    link_override: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the engine's node dict for one machine row of `machine_rows`."""
    nics = [dict(n) for n in row["nics"]]
    if link_override:
        data = sorted(
            (n for n in nics if n["role"] == "data"), key=lambda n: (-n["speed_gbps"], n["name"])
        )
        name = data[0]["name"] if data else "eth0"
        nics = [n for n in nics if n["role"] != "data"] + [
            {
                "name": str(link_override.get("name") or name),
                "speed_gbps": link_override["speed_gbps"],
                "kind": link_override.get("kind", "ethernet"),
                "role": "data",
            }
        ]
    memory = row["gpu_type__memory_gib"]
    node: dict[str, Any] = {
        "hostname": row["hostname"],
        "gpu": {
            "slug": row["gpu_type__slug"],
            "name": row["gpu_type__name"],
            "memory_gib": memory,
            "driver_visible_gib": row["gpu_type__driver_visible_gib"] or round(memory * 0.99, 2),
            "hbm_bandwidth_gbs": row["gpu_type__hbm_bandwidth_gbs"],
            "bf16_dense_tflops": row["gpu_type__bf16_dense_tflops"],
            "fp8_support": row["gpu_type__fp8_support"],
            "nvlink_gbs": row["gpu_type__nvlink_bandwidth_gbs"],
            "vendor": row["gpu_type__vendor"],
        },
        "gpu_count": row["gpu_count"],
        "intra_link": row["interconnect"],
        "nics": nics,
    }
    if row.get("management_address"):
        node["address"] = row["management_address"]
    if free_gpus is not None:
        node["free_gpus"] = free_gpus
    return node


def resolve_hardware(raw: Any, errors: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Return (engine hardware dict, hostnames offered); inline hardware passes through.

    When the pool kind is inferred from the inventory, each node states its pool's kind and the
    engine plans with the kind of the nodes it chooses.
    """
    if not isinstance(raw, Mapping):
        return raw, []
    if not any(key in raw for key in ("hostnames", "pool", "fleet")):
        hw = dict(raw)
        count, gpu = _what_if_hardware(hw, errors)
        hw.pop("machine_count", None)
        hw.pop("gpu_override", None)
        if "node_count" in hw:
            hw.update({k: v for k, v in (("node_count", count), ("gpu", gpu)) if v is not None})
        elif isinstance(hw.get("nodes"), list) and (count is not None or gpu is not None):
            hw["nodes"] = _what_if_nodes(
                [n for n in hw["nodes"] if isinstance(n, Mapping)], count, gpu
            )
        override = hw.pop("link_override", None)
        if override and "node_count" in hw:
            hw["inter_node_gbps"] = override.get("speed_gbps", hw.get("inter_node_gbps"))
            hw["inter_node_kind"] = override.get("kind", hw.get("inter_node_kind", "ethernet"))
        elif override and isinstance(hw.get("nodes"), list):
            hw["nodes"] = [
                dict(
                    n,
                    nics=[x for x in n.get("nics") or [] if x.get("role", "data") != "data"]
                    + [{"name": "eth0", "role": "data", **override}],
                )
                for n in hw["nodes"]
                if isinstance(n, Mapping)
            ]
        nodes = hw.get("nodes")
        if nodes is not None and not isinstance(nodes, list):
            errors["hardware.nodes"] = "must be a list of node objects"
            return hw, []
        return hw, [n.get("hostname", "") for n in nodes or [] if isinstance(n, Mapping)]

    pool_kind = raw.get("pool_kind")
    machines: list[dict[str, Any]]
    if raw.get("hostnames"):
        wanted = raw["hostnames"]
        if not isinstance(wanted, list) or not all(isinstance(h, str) for h in wanted):
            errors["hardware.hostnames"] = "must be a list of hostnames"
            return {}, []
        wanted = [h.strip().lower() for h in wanted]
        machines = machine_rows(Machine.objects.filter(hostname__in=wanted))
        found = {m["hostname"] for m in machines}
        missing = [h for h in wanted if h not in found]
        if missing:
            errors["hardware.hostnames"] = (
                f"unknown hostname(s): {', '.join(missing)}; not in the inventory"
            )
            return {}, []
        order = {h: i for i, h in enumerate(wanted)}
        machines.sort(key=lambda m: order[m["hostname"]])
    elif raw.get("pool"):
        key = raw["pool"]
        if isinstance(key, int):
            # Bounded to the id column's range: SQLite cannot bind a larger integer.
            pool = Pool.objects.filter(pk=key).first() if 0 < key < 2**63 else None
        else:
            pool = Pool.objects.filter(name=str(key)).first()
        if pool is None:
            errors["hardware.pool"] = f"unknown pool {key!r}"
            return {}, []
        machines = machine_rows(
            Machine.objects.filter(pool_id=pool.pk, status=MachineStatus.ACTIVE)
        )
        if not machines:
            errors["hardware.pool"] = f"pool {pool.name!r} has no active machine"
            return {}, []
        pool_kind = pool_kind or pool.kind
    else:
        machines = machine_rows(Machine.objects.filter(status=MachineStatus.ACTIVE))
        if not machines:
            errors["hardware.fleet"] = "the inventory has no active machine"
            return {}, []
    inferred = pool_kind is None
    if inferred:
        kinds = {m["pool__kind"] or "dedicated" for m in machines}
        pool_kind = "shared" if "shared" in kinds else "dedicated"
    free = raw.get("free_gpus") or {}
    if not isinstance(free, Mapping):
        errors["hardware.free_gpus"] = "must map hostnames to free GPU counts"
        free = {}
    override = raw.get("link_override")
    nodes = [
        row_to_node(m, free_gpus=free.get(m["hostname"]), link_override=override) for m in machines
    ]
    if inferred:
        for node, m in zip(nodes, machines, strict=True):
            node["pool_kind"] = m["pool__kind"] or "dedicated"
    count, gpu = _what_if_hardware(raw, errors)
    return {"nodes": _what_if_nodes(nodes, count, gpu), "pool_kind": pool_kind}, [
        m["hostname"] for m in machines
    ]


def _what_if_hardware(raw: Mapping[str, Any], errors: dict[str, str]) -> tuple[int | None, Any]:
    """Return the what-if machine count and GPU slug of a hardware spec (None: unchanged)."""
    raw = dict(raw)
    count = raw.pop("machine_count", None)
    gpu = raw.pop("gpu_override", None)
    if count is not None and (
        isinstance(count, bool)
        or not isinstance(count, int)
        or not 1 <= count <= MAX_WHAT_IF_MACHINES
    ):
        errors["hardware.machine_count"] = (
            f"must be a whole number from 1 to {MAX_WHAT_IF_MACHINES}"
        )
        count = None
    if gpu is not None and not isinstance(gpu, str):
        errors["hardware.gpu_override"] = "must be a GPU slug"
        gpu = None
    return count, gpu


def _what_if_nodes(nodes: list[dict[str, Any]], count: int | None, gpu: str | None) -> list[Any]:
    """Return the offered nodes resized to `count` machines and given `gpu` GPUs ("what if").

    Extra machines are copies of the last offered one, named `<host>-what-if-<n>`: they exist
    only in this evaluation, never in the inventory.
    """
    out = [dict(n) for n in nodes]
    if count is not None and out:
        template = out[-1]
        extra = [
            {**template, "hostname": f"{template['hostname']}-what-if-{i}"}
            for i in range(1, count - len(out) + 1)
        ]
        out = (out + extra)[:count]
    if gpu is not None:
        out = [{**n, "gpu": gpu} for n in out]
    return out


def resolve_spec(spec: Mapping[str, Any]) -> ResolvedSpec:
    """Return the engine input for a user spec; raise SpecError naming every bad field.

    The user spec is the engine's spec plus: `model` may name an inventory model spec;
    `hardware` may be {"hostnames": [...]}, {"pool": name} or {"fleet": true} with optional
    `free_gpus` {hostname: n}, `pool_kind` and `link_override` {speed_gbps, kind} (what if the
    nodes had another link); `pinned` is accepted for `pinned_layout`.
    """
    if not isinstance(spec, Mapping):
        raise SpecError({"spec": "must be a JSON object"})
    errors: dict[str, str] = {}
    for where in nul_paths(spec):  # PostgreSQL text cannot hold NUL: refuse it by name
        errors[where] = "must not contain NUL (\\x00) characters"
    if errors:
        raise SpecError(errors)
    # `calibration` names a profile: the assumptions change, not the engine's input.
    engine_input = {k: v for k, v in spec.items() if k not in {"title", "pinned", "calibration"}}
    if "pinned" in spec and "pinned_layout" not in spec:
        engine_input["pinned_layout"] = spec["pinned"]
    engine_input["model"], slug = resolve_model(spec.get("model"), errors)
    hostnames: list[str] = []
    if "hardware" in spec:
        engine_input["hardware"], hostnames = resolve_hardware(spec["hardware"], errors)
    if errors:
        raise SpecError(errors)
    hw = engine_input.get("hardware")
    pool_kind = hw.get("pool_kind", "dedicated") if isinstance(hw, Mapping) else "dedicated"
    nodes = hw.get("nodes") if isinstance(hw, Mapping) else None
    kinds = {
        n["hostname"]: n["pool_kind"]
        for n in nodes or ()
        if isinstance(n, Mapping) and isinstance(n.get("pool_kind"), str) and "hostname" in n
    }
    return ResolvedSpec(
        engine_input=engine_input,
        model_slug=slug,
        hostnames=[h for h in hostnames if h],
        pool_kind=str(pool_kind or "dedicated"),
        pool_kind_by_host=kinds,
    )


def user_error_keys(spec: Mapping[str, Any], errors: Mapping[str, str]) -> dict[str, str]:
    """Return engine errors keyed as the user wrote them (`pinned` for `pinned_layout`)."""
    if "pinned" in spec and "pinned_layout" not in spec:
        return {
            ("pinned" + k[len("pinned_layout") :] if k.startswith("pinned_layout") else k): v
            for k, v in errors.items()
        }
    return dict(errors)
