"""The ownership template of DOMAIN.md §7 (seed 001, closing section) and the evidence kinds.

Every label and guidance text is marked for translation; the model stores only the stable ids.
"""

from dataclasses import dataclass

from django.db import models
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from inventory.models import PoolKind  # the one table of pool kinds


class ResponsibilityKind(models.TextChoices):
    # Order matters: it is the row order of the table everywhere.
    ALLOCATION = "allocation", _("Who allocates the GPUs to this replica")
    WORKERS = "workers", _("Who starts and organises the workers")
    RAY_BENEFIT = "ray_benefit", _("The concrete benefit of Ray")
    RECOVERY = "recovery", _("How traffic comes back after a failure")
    PROOF = "proof", _("How the choice is proven")


# (kind, pool kind) -> guidance shown beside the field; DOMAIN.md §7, seed 001 closing table.
GUIDANCE: dict[tuple[str, str], Promise] = {
    ("allocation", "dedicated"): _("The existing platform reserves the whole group of GPUs."),
    ("allocation", "shared"): _(
        "Name the scheduler that reserves the whole group atomically (a Ray placement group is "
        "one candidate). A bundle must fit on one node."
    ),
    ("workers", "dedicated"): _(
        "Name who launches both ends, the node identities and the one shared config; the mp "
        "executor works."
    ),
    ("workers", "shared"): _(
        "Check the Ray cluster, the actual bundles and where each worker was placed."
    ),
    ("ray_benefit", "dedicated"): _(
        "If today's owners already cover the rows above, do not migrate yet."
    ),
    ("ray_benefit", "shared"): _(
        "Name the hand-written scheduling you delete, or the Ray estate you reuse."
    ),
    ("recovery", "dedicated"): _("Name who rebuilds the instance and how failed requests end."),
    ("recovery", "shared"): _(
        "Name who rebuilds the instance and how failed requests end; an actor reappearing is "
        "not the service being available."
    ),
    ("proof", "dedicated"): _("Keep start-up, request-completion and failure-recovery records."),
    ("proof", "shared"): _(
        "Keep start-up, request-completion and failure-recovery records, plus resource-wait and "
        "placement evidence."
    ),
}


def guidance_for(kind: str, pool_kind: str) -> Promise:
    """Return the guidance text for one responsibility row in a pool of `pool_kind`."""
    return GUIDANCE.get((kind, pool_kind), GUIDANCE[(kind, PoolKind.DEDICATED)])


class EvidenceKind(models.TextChoices):
    START_TO_SERVING = "start_to_serving", _("Time from start to serving")
    TTFT_P95 = "ttft_p95", _("Time to first token, p95")
    ITL_P95 = "itl_p95", _("Inter-token latency, p95")
    COMPLETION_RATE = "completion_rate", _("Request completion rate")
    DRILL_RECOVERY = (
        "drill_recovery",
        _("Failure drill: time from a worker failure to the next successful request"),
    )
    DRILL_IN_FLIGHT = (
        "drill_in_flight",
        _("Failure drill: in-flight requests that failed or were cut off"),
    )
    GPU_UTILIZATION = "gpu_utilization", _("GPU utilisation while serving (mean)")


@dataclass(frozen=True, slots=True)
class EvidenceSpec:
    """How an evidence kind is measured: its unit and which side of the threshold passes."""

    unit: str
    lower_is_better: bool
    hint: Promise
    # Optional evidence blocks acceptance only once someone sets a threshold for it.
    required: bool = True


EVIDENCE_SPECS: dict[str, EvidenceSpec] = {
    "start_to_serving": EvidenceSpec(
        "s", True, _("Seconds from launching the instance to its first successful request.")
    ),
    "ttft_p95": EvidenceSpec(
        "ms", True, _("Under the same model, precision, parallelism, inputs and GPU placement.")
    ),
    "itl_p95": EvidenceSpec("ms", True, _("Steady requests, same conditions as TTFT.")),
    "completion_rate": EvidenceSpec(
        "%", False, _("Share of requests that completed without error.")
    ),
    "drill_recovery": EvidenceSpec(
        "s", True, _("Kill one worker; seconds until the next request succeeds.")
    ),
    "gpu_utilization": EvidenceSpec(
        "%",
        False,
        _(
            "Mean utilisation of the GPUs the deployment runs on, from their exporters "
            "(dcgm-exporter or nvidia_gpu_exporter) over the same window as the latency. "
            "Optional: set a threshold to make it a condition."
        ),
        required=False,
    ),
    "drill_in_flight": EvidenceSpec(
        "%",
        True,
        _(
            "Share of requests in flight at the failure that ended in an error or were cut off; "
            "say in the note how they ended (error, retry, truncated stream)."
        ),
    ),
}

# Units a measurement may arrive in, converted to the kind's unit (factor to multiply by).
UNIT_FACTORS: dict[tuple[str, str], float] = {
    ("s", "s"): 1.0,
    ("ms", "s"): 0.001,
    ("s", "ms"): 1000.0,
    ("ms", "ms"): 1.0,
    ("%", "%"): 1.0,
    ("ratio", "%"): 100.0,
}
