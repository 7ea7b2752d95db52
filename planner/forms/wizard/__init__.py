"""The five steps of the planning wizard, one form each.

Each form validates its own fields with messages that name the allowed range; the engine then
checks the whole spec again (and its errors are shown next to the matching field).
"""

from planner.forms.wizard.choices import (
    DEFAULT_MODEL,
    KV_DTYPE_CHOICES,
    WEIGHT_DTYPE_CHOICES,
    model_choices,
    model_default_dtype,
    model_limit,
)
from planner.forms.wizard.load_step import LoadStepForm
from planner.forms.wizard.machines_step import (
    MEASURED_LINK_FIELDS,
    MachinesStepForm,
    active_machines,
)
from planner.forms.wizard.model_steps import ModelStepForm, PrecisionStepForm
from planner.forms.wizard.operations_step import OPERATION_QUESTIONS, OperationsStepForm

__all__ = [
    "DEFAULT_MODEL",
    "KV_DTYPE_CHOICES",
    "MEASURED_LINK_FIELDS",
    "OPERATION_QUESTIONS",
    "WEIGHT_DTYPE_CHOICES",
    "LoadStepForm",
    "MachinesStepForm",
    "ModelStepForm",
    "OperationsStepForm",
    "PrecisionStepForm",
    "active_machines",
    "model_choices",
    "model_default_dtype",
    "model_limit",
]
