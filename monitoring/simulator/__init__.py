"""A built-in metrics server that mimics vLLM 0.32 and Ray 2.60, for the demo, tests and benches.

Pure Python (stdlib http.server + prometheus_client); no Django. Start it with
`Simulator(port=9400).start()` (returns the targets) or `python -m monitoring.simulator`.
"""

from .server import DEFAULT_PORT, SimTarget, Simulator

__all__ = ["DEFAULT_PORT", "SimTarget", "Simulator"]
