"""Choose one option per model and the nodes of its instances: an exact integer program.

Why an integer program (scipy's HiGHS MILP) and not first fit: first fit in priority order
gives the first model the layout it likes and can leave a later model no node with room, where
a different layout of the first would place both. The program sees every model at once.

Variables: x[o] (option o chosen), y[o, n] (instances of option o on node n, integer),
u[m] (model m left unplaced). Constraints: each model takes one option or is unplaced; an
option's instances add up to its replicas; a node's instances fit its usable GPUs. Objective,
in strict order of weight:
1. place models, higher priority first (an unplaced model costs more than all GPUs together);
2. meet SLOs, higher priority first (a miss costs half an unplaced model);
3. use the fewest GPUs;
4. ties broken by the load headroom of the higher-priority models (worth less than one GPU).
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
    n_x, n_y, n_u = len(options), len(pairs), len(models)
    size = n_x + n_y + n_u
    total_gpus = sum(n.usable_gpus for n in hosts)
    w_unplaced, w_slo, w_headroom = _weights(priorities, total_gpus)

    cost = np.zeros(size)
    for i, o in enumerate(options):
        p = priorities[o.model]
        cost[i] = o.gpus + (0.0 if o.slo_met else w_slo * p)
        cost[i] -= w_headroom * p * min(o.growth_headroom, _HEADROOM_CAP)
    for k, m in enumerate(models):
        cost[n_x + n_y + k] = w_unplaced * priorities[m]

    rows: list[np.ndarray] = []
    lo: list[float] = []
    hi: list[float] = []
    for k, m in enumerate(models):  # one option, or unplaced
        row = np.zeros(size)
        row[[i for i, o in enumerate(options) if o.model == m]] = 1.0
        row[n_x + n_y + k] = 1.0
        rows.append(row)
        lo.append(1.0)
        hi.append(1.0)
    for i, o in enumerate(options):  # instances add up to the option's replicas
        row = np.zeros(size)
        row[i] = -o.replicas
        for p, (oi, _) in enumerate(pairs):
            if oi == i:
                row[n_x + p] = 1.0
        rows.append(row)
        lo.append(0.0)
        hi.append(0.0)
    for j, n in enumerate(hosts):  # a node's instances fit its usable GPUs
        row = np.zeros(size)
        for p, (oi, nj) in enumerate(pairs):
            if nj == j:
                row[n_x + p] = options[oi].tp
        rows.append(row)
        lo.append(0.0)
        hi.append(float(n.usable_gpus))

    upper = np.ones(size)
    for p, (oi, nj) in enumerate(pairs):
        upper[n_x + p] = min(options[oi].replicas, hosts[nj].usable_gpus // options[oi].tp)
    result = milp(
        cost,
        constraints=LinearConstraint(np.array(rows), lo, hi) if rows else (),
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
            hosts[nj].hostname: int(x[n_x + p])
            for p, (oi, nj) in enumerate(pairs)
            if oi == i and x[n_x + p] > 0
        }
        chosen[o.model] = Chosen(option=o, instances=instances)
    unplaced = tuple(m for m in models if m not in chosen)
    return Solution(chosen=chosen, unplaced=unplaced, optimal=result.status == 0)
