"""Choose one option per model and the nodes of its instances: an exact integer program.

Why an integer program (scipy's HiGHS MILP) and not first fit: first fit in priority order
gives the first model the layout it likes and can leave a later model no node with room, where
a different layout of the first would place both. The program sees every model at once.

Variables: x[o] (option o chosen), y[o, n] (instances of option o on node n, integer),
u[m] (model m left unplaced), z[n] (GPUs of node n given to shared instances, integer).
Constraints: each model takes one option or is unplaced; an option's instances add up to its
replicas; a node's whole-GPU instances and its shared GPUs fit its usable GPUs; a node's shared
GPUs hold its shared instances two by two, and each model's shared instances on distinct GPUs
(z[n] >= S[n] / 2 and z[n] >= y[o, n] for each shared option o). Objective, in strict order of
weight:
1. place models, higher priority first (an unplaced model costs more than all GPUs together);
2. meet SLOs, higher priority first (a miss costs half an unplaced model);
3. use the fewest GPUs (a shared GPU counts once, whoever shares it);
4. ties broken by the load headroom of the higher-priority models (worth less than a GPU).
Every weight is an integer multiple of the next level's largest total, so no level trades
against a lower one. CP-SAT would do as well; scipy is already a dependency and its MILP
solves an 8-model, 64-GPU pool in milliseconds (bench/bench_pool_placement.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from planner.engine.pool.options import Option
from planner.engine.spec import Node

SOLVER_TIME_LIMIT_S = 2.0
_HEADROOM_CAP = 4.0  # beyond 4x its load a model's extra headroom buys nothing more


@dataclass(frozen=True, slots=True, kw_only=True)
class Chosen:
    option: Option
    instances: dict[str, int]  # host name -> instances of the option on it


@dataclass(frozen=True, slots=True, kw_only=True)
class Solution:
    chosen: dict[str, Chosen]  # model name -> its option and nodes
    unplaced: tuple[str, ...]
    optimal: bool


def _weights(priorities: dict[str, int], total_gpus: int) -> tuple[float, float, float]:
    """Return the per-priority-point weights of an unplaced model and of a missed SLO, and the
    headroom weight, each dominating everything below it (a GPU weighs 1)."""
    points = max(priorities.values(), default=1) * len(priorities)
    headroom = 0.5 / max(_HEADROOM_CAP * points, 1.0)  # all headroom together < half a GPU
    slo = total_gpus + 1.0  # one missed SLO outweighs every GPU of the pool
    unplaced = 2 * slo * (points + 1)  # one unplaced model outweighs every missed SLO
    return unplaced, slo, headroom


def place(options: Sequence[Option], priorities: dict[str, int], nodes: Sequence[Node]) -> Solution:
    """Return the best choice of options and their nodes (see the module's objective)."""
    models = list(priorities)
    hosts = [n for n in nodes if n.usable_gpus > 0]
    pairs = [
        (i, j)
        for i, o in enumerate(options)
        for j, n in enumerate(hosts)
        if n.gpu.slug == o.gpu and n.usable_gpus >= o.tp
    ]
    n_x, n_y, n_u, n_z = len(options), len(pairs), len(models), len(hosts)
    y0, u0, z0 = n_x, n_x + n_y, n_x + n_y + n_u
    size = z0 + n_z
    total_gpus = sum(n.usable_gpus for n in hosts)
    w_unplaced, w_slo, w_headroom = _weights(priorities, total_gpus)

    cost = np.zeros(size)
    for i, o in enumerate(options):
        p = priorities[o.model]
        # A shared option's GPUs are paid through z, once per GPU, whoever shares it.
        cost[i] = (0.0 if o.shared else o.gpus) + (0.0 if o.slo_met else w_slo * p)
        cost[i] -= w_headroom * p * min(o.growth_headroom, _HEADROOM_CAP)
    for k, m in enumerate(models):
        cost[u0 + k] = w_unplaced * priorities[m]
    cost[z0:] = 1.0

    rows = _Rows(size)
    for k, m in enumerate(models):  # one option, or unplaced
        rows.add({**{i: 1.0 for i, o in enumerate(options) if o.model == m}, u0 + k: 1.0}, 1, 1)
    for i, o in enumerate(options):  # instances add up to the option's replicas
        rows.add({i: -o.replicas, **{y0 + p: 1.0 for p, (oi, _) in enumerate(pairs) if oi == i}})
    for j, n in enumerate(hosts):
        on_node = [(p, options[oi]) for p, (oi, nj) in enumerate(pairs) if nj == j]
        # Whole-GPU instances and the shared GPUs fit the node's usable GPUs.
        whole = {y0 + p: float(o.tp) for p, o in on_node if not o.shared}
        rows.add({**whole, z0 + j: 1.0}, 0, n.usable_gpus)
        shared = [p for p, o in on_node if o.shared]
        if shared:  # two shared instances per shared GPU, one model's on distinct GPUs
            rows.add({**{y0 + p: 1.0 for p in shared}, z0 + j: -2.0}, -np.inf, 0)
            for p in shared:
                rows.add({y0 + p: 1.0, z0 + j: -1.0}, -np.inf, 0)

    upper = np.ones(size)
    for p, (oi, nj) in enumerate(pairs):
        upper[y0 + p] = min(options[oi].replicas, hosts[nj].usable_gpus // options[oi].tp)
    upper[z0:] = [n.usable_gpus for n in hosts]
    result = milp(
        cost,
        constraints=rows.constraint(),
        integrality=np.ones(size),
        bounds=Bounds(np.zeros(size), upper),
        options={"time_limit": SOLVER_TIME_LIMIT_S},
    )
    if result.x is None:  # no feasible point found in time: every model unplaced is feasible
        return Solution(chosen={}, unplaced=tuple(models), optimal=False)
    x = np.rint(result.x).astype(int)
    chosen: dict[str, Chosen] = {}
    for i, o in enumerate(options):
        if x[i] != 1:
            continue
        instances = {
            hosts[nj].hostname: int(x[y0 + p])
            for p, (oi, nj) in enumerate(pairs)
            if oi == i and x[y0 + p] > 0
        }
        chosen[o.model] = Chosen(option=o, instances=instances)
    unplaced = tuple(m for m in models if m not in chosen)
    return Solution(chosen=chosen, unplaced=unplaced, optimal=result.status == 0)


class _Rows:
    """The program's linear constraints, one sparse row at a time: lo <= row . v <= hi."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rows: list[np.ndarray] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, coefficients: dict[int, float], lo: float = 0.0, hi: float = 0.0) -> None:
        row = np.zeros(self.size)
        for index, value in coefficients.items():
            row[index] = value
        self.rows.append(row)
        self.lo.append(lo)
        self.hi.append(hi)

    def constraint(self) -> LinearConstraint | tuple[()]:
        if not self.rows:
            return ()
        return LinearConstraint(np.array(self.rows), self.lo, self.hi)
