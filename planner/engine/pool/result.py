"""What a pool plan returns: each model's layout and GPUs, the spare GPUs, the route."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from planner.engine.messages import Message
from planner.engine.result import ResultFormatError, Route, plain
from planner.engine.serving.predict import Prediction


class Router(StrEnum):
    """What sends each request to its model's servers on Route A (by the `model` field)."""

    LITELLM = "litellm"


@dataclass(frozen=True, slots=True, kw_only=True)
class InstancePlacement:
    host: str
    gpu_indices: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedModel:
    """A model the pool serves: its layout, its GPUs, its memory and predicted speed."""

    name: str
    model: str  # the Hugging Face repository
    priority: int
    gpu: str
    weight_dtype: str
    tp: int
    replicas: int
    gpus: int
    instances: tuple[InstancePlacement, ...]
    gpu_memory_utilization: float
    weights_gib_per_gpu: float
    kv_tokens_per_replica: int
    max_concurrency_total: float
    concurrency: float
    # The serving model's prediction at the model's load: the one number shown for each.
    prediction: Prediction | None
    slo_met: bool  # True when the model has no SLO
    growth_headroom: float  # how far its load may grow before it runs out of KV or SLO
    # Its instances take half a GPU each, beside another model's (the pool allows sharing):
    # gpu_memory_utilization is then half the model's own, and its speed half the GPU's time.
    shares_gpus: bool = False


def gpus_in_use(placed: Iterable[PlacedModel]) -> int:
    """Return the GPUs the placed models run on (a GPU two models share counts once)."""
    return len({(i.host, g) for m in placed for i in m.instances for g in i.gpu_indices})


@dataclass(frozen=True, slots=True, kw_only=True)
class UnplacedModel:
    name: str
    model: str
    priority: int
    reason: Message
    hints: tuple[Message, ...]  # what would place it


@dataclass(frozen=True, slots=True, kw_only=True)
class FirstToHurt:
    name: str
    growth_headroom: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolRoute:
    route: Route  # A (one vLLM per model behind one router) or C (Ray Serve applications)
    router: Router | None  # Route A's
    reasons: tuple[Message, ...]  # the signals weighed, each with its numbers


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolResult:
    placed: tuple[PlacedModel, ...]
    unplaced: tuple[UnplacedModel, ...]
    spare_gpus: dict[str, int]  # host -> GPUs no model uses
    first_to_hurt: FirstToHurt | None
    route: PoolRoute
    optimal: bool  # False when the solver's time limit ended the search first

    @property
    def gpus_used(self) -> int:
        return gpus_in_use(self.placed)

    def model(self, name: str) -> PlacedModel | None:
        return next((m for m in self.placed if m.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """Return the result as JSON-able values (messages as codes and parameters)."""
        out: dict[str, Any] = plain(self)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PoolResult:
        """Return the result a saved pool plan stored; raise ResultFormatError naming the field."""
        from pydantic import ValidationError

        try:
            result: PoolResult = _validator().validate_python(dict(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ResultFormatError(f"{where}: {first['msg']}") from exc
        return result


@cache
def _validator() -> Any:
    # Imported late, as for PlanResult, so that the engine's own import stays light.
    from pydantic import TypeAdapter

    return TypeAdapter(PoolResult)
