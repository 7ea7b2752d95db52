"""What a bundle needs to know about a candidate layout, and which routes can deploy it."""

from __future__ import annotations

from dataclasses import dataclass

from planner.engine.result import Backend, Candidate, Route, layout_label
from planner.engine.spec import PlanSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class BundleLayout:
    """A candidate's layout: TP × PP × replicas and the hosts of every replica."""

    candidate_id: str
    tp: int
    pp: int
    replicas: int
    nodes_per_replica: int
    weight_dtype: str
    hosts: tuple[tuple[str, ...], ...]
    max_concurrency_per_replica: float = 1.0
    kv_tokens_per_replica: int = 0
    weights_gib_total: float = 0.0  # one replica's checkpoint: the disk every host needs

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def gpus_per_node(self) -> int:
        """Return the GPUs one replica uses on each of its nodes."""
        return self.gpus_per_replica // max(self.nodes_per_replica, 1)

    @property
    def spans_nodes(self) -> bool:
        return self.nodes_per_replica > 1

    @property
    def label(self) -> str:
        return layout_label(self.tp, self.pp, self.replicas)

    @property
    def host_names(self) -> tuple[str, ...]:
        """Return every host the layout uses, in replica order, once."""
        return tuple(dict.fromkeys(h for hosts in self.hosts for h in hosts))

    @classmethod
    def from_candidate(cls, c: Candidate) -> BundleLayout:
        return cls(
            candidate_id=c.id,
            tp=c.tp,
            pp=c.pp,
            replicas=c.replicas,
            nodes_per_replica=c.nodes_per_replica,
            weight_dtype=c.weight_dtype,
            hosts=tuple(tuple(h) for h in c.hosts),
            max_concurrency_per_replica=c.max_concurrency_per_replica,
            kv_tokens_per_replica=c.kv_tokens_per_replica,
            weights_gib_total=_weights_gib_total(c),
        )


def _weights_gib_total(c: Candidate) -> float:
    """Return the weights of one replica: every pipeline stage's share times the TP ranks."""
    stages = c.memory.stage_weights_gib or (c.memory.weights_gib,) * max(c.pp, 1)
    return float(sum(stages)) * c.tp


@dataclass(frozen=True, slots=True)
class Variant:
    """A route and executor backend a layout can be deployed with."""

    route: Route  # single | A | B | C
    backend: Backend  # mp | ray

    @property
    def key(self) -> str:
        return f"{self.route}-{self.backend}"


# Every route-backend pair a bundle can be built as; variants() picks those a layout allows.
ALL_VARIANTS = (
    Variant(Route.SINGLE, Backend.MP),
    Variant(Route.A, Backend.MP),
    Variant(Route.B, Backend.MP),
    Variant(Route.B, Backend.RAY),
    Variant(Route.C, Backend.RAY),
)


def variants(layout: BundleLayout) -> tuple[Variant, ...]:
    """Return every way this layout can be deployed, the plain one first."""
    if layout.spans_nodes:
        return (Variant(Route.B, Backend.MP), Variant(Route.B, Backend.RAY))
    plain = Variant(Route.SINGLE if layout.replicas == 1 else Route.A, Backend.MP)
    return (plain, Variant(Route.C, Backend.RAY))


def default_variant(
    layout: BundleLayout, *, recommended: Variant | None, pool_kind: str = "dedicated"
) -> Variant:
    """Return the variant a candidate is deployed with unless the user picks another.

    The recommendation's own route wins when it applies to this layout (Route C stays C, a Ray
    backend stays Ray); otherwise a shared pool takes Ray for cross-node replicas (a placement
    group reserves the GPUs atomically) and everything else the plain route.
    """
    options = variants(layout)
    if recommended is not None and recommended in options:
        return recommended
    if layout.spans_nodes and pool_kind == "shared":
        return Variant(Route.B, Backend.RAY)
    return options[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeApp:
    """One model of a Route C pool: its spec, layout and the replica bounds it asks for."""

    spec: PlanSpec
    layout: BundleLayout
    name: str
    route_prefix: str
    # The share of a GPU each replica asks Ray for: 0.5 when two replicas share one (TP 1
    # only, each with half the memory share in its spec); 1 takes TP x PP whole GPUs.
    gpu_share: float = 1.0

    @property
    def gpus_per_replica(self) -> float:
        """Return the GPUs a replica asks Ray for (ray_actor_options.num_gpus)."""
        if self.gpu_share < 1:
            return self.gpu_share
        return self.layout.gpus_per_replica
