"""Load shapes for simulated servers: a diurnal curve with random bursts, deterministic per seed."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field


@dataclass(slots=True)
class LoadModel:
    """Requests per second at a given time: base x diurnal(t) x burst(t).

    `day_s` compresses a day (default 30 min) so a demo shows the whole shape quickly; bursts
    start at random (mean gap `burst_gap_s`) and multiply the load by 2-4 for 20-120 s.
    """

    base_rps: float
    day_s: float = 1800.0
    phase: float = 0.0
    burst_gap_s: float = 300.0
    seed: int = 0
    _rng: random.Random = field(init=False)
    _burst_until: float = field(init=False, default=0.0)
    _next_burst: float = field(init=False, default=0.0)
    _burst_factor: float = field(init=False, default=1.0)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._next_burst = -1.0

    def diurnal(self, t: float) -> float:
        """Return 0.15-1.0: low at night, a peak in the afternoon."""
        x = 2 * math.pi * (t / self.day_s + self.phase)
        return 0.575 + 0.425 * math.sin(x)

    def rps(self, t: float) -> float:
        if self._next_burst < 0:
            self._next_burst = t + self._rng.expovariate(1 / self.burst_gap_s)
        if t >= self._next_burst:
            self._burst_until = t + self._rng.uniform(20, 120)
            self._burst_factor = self._rng.uniform(2.0, 4.0)
            self._next_burst = self._burst_until + self._rng.expovariate(1 / self.burst_gap_s)
        burst = self._burst_factor if t < self._burst_until else 1.0
        return self.base_rps * self.diurnal(t) * burst

    def arrivals(self, t: float, dt: float) -> int:
        """Return a Poisson count of requests in (t - dt, t]."""
        lam = max(0.0, self.rps(t) * dt)
        if lam > 50:
            return max(0, round(self._rng.gauss(lam, math.sqrt(lam))))
        # Knuth's method: fine for small means.
        limit = math.exp(-lam)
        k, p = 0, self._rng.random()
        while p > limit:
            k += 1
            p *= self._rng.random()
        return k

    @property
    def rng(self) -> random.Random:
        return self._rng
