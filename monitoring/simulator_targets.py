"""Adapter: the simulator's target list without starting it.

`Simulator.targets()` lists the Ray cluster only once started (its ports are bound then); the
layout is documented in monitoring/simulator/server.py (P: vLLM, P+1: Ray dashboard), so the
Ray target is added here for a fixed base port.
"""

from __future__ import annotations

from monitoring.simulator import SimTarget, Simulator


def simulator_targets(*, port: int, vllm_count: int = 3, ray: bool = True) -> list[SimTarget]:
    """Return the targets a simulator started with these options serves."""
    sim = Simulator(port=port, vllm_count=vllm_count, ray=ray)
    targets = list(sim.targets())
    if ray and not any(t.kind == "ray" for t in targets):
        targets.append(SimTarget("ray", f"http://127.0.0.1:{port + 1}", "sim-ray", "Ray cluster"))
    return targets
