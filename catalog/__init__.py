"""GPU datasheets and LLM architectures (real config.json values), and the arithmetic on them.

Pure Python: no Django, and nothing else of ours is imported here.
"""

from catalog.architecture import (
    Architecture,
    ArchitectureError,
    ParameterBreakdown,
    parameter_breakdown,
)
from catalog.hf_config import from_hf_config

__all__ = [
    "Architecture",
    "ArchitectureError",
    "ParameterBreakdown",
    "from_hf_config",
    "parameter_breakdown",
]
