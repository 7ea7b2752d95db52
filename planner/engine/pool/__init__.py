"""Several models on one pool of machines: who gets which GPUs, and which route serves them.

`plan_pool(spec)` is the entry: each model's layouts are evaluated by the single-model engine
(options.py), an exact integer program chooses one layout per model and the nodes of its
instances (solve.py), concrete GPU indices are laid out inside NVLink islands (gpus.py), and the
serving model predicts each placed model at its load (plan.py).
"""

from planner.engine.pool.plan import plan_pool
from planner.engine.pool.result import PoolResult
from planner.engine.pool.spec import PoolModel, PoolSpec, pool_spec_from_dict

__all__ = ["PoolModel", "PoolResult", "PoolSpec", "plan_pool", "pool_spec_from_dict"]
