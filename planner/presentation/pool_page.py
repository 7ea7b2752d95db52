"""What the pool plan page shows: a GPU map (hosts × GPUs, coloured by model) and each model's
card, in the reader's language. Built from the typed result; the template only lays it out."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from planner.engine.pool.result import PlacedModel, PoolResult, UnplacedModel
from planner.presentation.messages import text

PALETTE_SIZE = 16  # pool-colour-0 .. 15 in planner.css


@dataclass(frozen=True, slots=True)
class GpuOwner:
    model: str
    colour: int  # index into the palette


@dataclass(frozen=True, slots=True)
class GpuCell:
    index: int
    owners: tuple[GpuOwner, ...]  # none when the GPU is spare; two when models share it

    @property
    def colour(self) -> int:
        """Return the palette colour of a GPU one model owns; -1 when spare or shared."""
        return self.owners[0].colour if len(self.owners) == 1 else -1

    @property
    def shared(self) -> bool:
        return len(self.owners) > 1


@dataclass(frozen=True, slots=True)
class HostRow:
    host: str
    cells: tuple[GpuCell, ...]


@dataclass(frozen=True, slots=True)
class ModelCard:
    model: PlacedModel
    colour: int
    gpus_by_host: tuple[tuple[str, str], ...]  # (host, "0-3, 4-7")


@dataclass(frozen=True, slots=True)
class UnplacedCard:
    model: UnplacedModel
    reason: str
    hints: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PoolPage:
    result: PoolResult
    gpu_map: tuple[HostRow, ...]
    cards: tuple[ModelCard, ...]
    unplaced: tuple[UnplacedCard, ...]
    route_reasons: tuple[str, ...]
    spare_total: int


def _ranges(indices: list[tuple[int, ...]]) -> str:
    return ", ".join(f"{g[0]}–{g[-1]}" if len(g) > 1 else str(g[0]) for g in sorted(indices))


def _gpu_map(result: PoolResult, colours: dict[str, int]) -> tuple[HostRow, ...]:
    owners: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for m in result.placed:
        for inst in m.instances:
            for gpu in inst.gpu_indices:
                owners[inst.host][gpu].append(m.name)
    hosts = sorted(set(owners) | set(result.spare_gpus))
    rows = []
    for host in hosts:
        count = len(owners[host]) + result.spare_gpus.get(host, 0)
        cells = []
        for i in range(count):
            names = owners[host].get(i, [])
            cells.append(
                GpuCell(index=i, owners=tuple(GpuOwner(model=n, colour=colours[n]) for n in names))
            )
        rows.append(HostRow(host=host, cells=tuple(cells)))
    return tuple(rows)


def pool_page(result: PoolResult) -> PoolPage:
    """Return the page's parts for a pool plan's result."""
    colours = {m.name: i % PALETTE_SIZE for i, m in enumerate(result.placed)}
    cards = []
    for m in result.placed:
        by_host: dict[str, list[tuple[int, ...]]] = defaultdict(list)
        for inst in m.instances:
            by_host[inst.host].append(inst.gpu_indices)
        cards.append(
            ModelCard(
                model=m,
                colour=colours[m.name],
                gpus_by_host=tuple((h, _ranges(g)) for h, g in sorted(by_host.items())),
            )
        )
    return PoolPage(
        result=result,
        gpu_map=_gpu_map(result, colours),
        cards=tuple(cards),
        unplaced=tuple(
            UnplacedCard(model=u, reason=text(u.reason), hints=tuple(text(h) for h in u.hints))
            for u in result.unplaced
        ),
        route_reasons=tuple(text(r) for r in result.route.reasons),
        spare_total=sum(result.spare_gpus.values()),
    )
