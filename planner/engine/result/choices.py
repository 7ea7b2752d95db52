"""The engine's closed choices (routes, backends, balancers, candidate kinds, severities...) as
StrEnums.
"""

from __future__ import annotations

from enum import StrEnum


class Route(StrEnum):
    SINGLE = "single"  # one GPU or one node, one replica
    A = "A"  # replicas inside nodes behind a balancer
    B = "B"  # one instance across nodes
    C = "C"  # Ray Serve pool
    NONE = "none"  # nothing fits


class Backend(StrEnum):
    MP = "mp"
    RAY = "ray"


class Balancer(StrEnum):
    NONE = "none"
    NGINX = "nginx"
    VLLM_DP = "vllm-dp"
    RAY_SERVE = "ray-serve"


class CandidateKind(StrEnum):
    SINGLE_GPU = "single-gpu"
    INTRA_NODE = "intra-node"
    CROSS_NODE_TP = "cross-node-tp"
    CROSS_NODE_PP = "cross-node-pp"


class PlacementStrategy(StrEnum):
    """Ray placement-group strategies (ray.util.placement_group)."""

    PACK = "PACK"
    SPREAD = "SPREAD"
    STRICT_PACK = "STRICT_PACK"
    STRICT_SPREAD = "STRICT_SPREAD"


class Severity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Return 0 for the most severe."""
        return list(Severity).index(self)


class Direction(StrEnum):
    FOR_RAY = "for_ray"
    AGAINST_RAY = "against_ray"


class Strength(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    MEDIUM_HIGH = "medium-high"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Return 0 for the weakest."""
        return list(Strength).index(self)


def layout_label(tp: int, pp: int, replicas: int) -> str:
    """Return the one spelling of a layout, e.g. 'TP4×PP2×1'."""
    return f"TP{tp}×PP{pp}×{replicas}"
