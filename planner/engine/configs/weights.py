"""What every host serves: each model's weights, the local path they live at, and its API name.

The scripts and the playbook read the same ServedModel: the path is the `vllm serve` argument
(and serve.yaml's `model`), a repository is fetched once per host into it, and the smoke test
asks for the served name.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.engine.configs.layout import BundleLayout
from planner.engine.configs.vllm import model_ref, operator_quantizes, served_model_name
from planner.engine.spec import PlanSpec

# The marker a finished download leaves: a half-fetched directory is fetched again.
COMPLETE_MARKER = ".serveplan-complete"
# Headroom over the checkpoint's size for the download's temporary files.
DISK_HEADROOM = 1.1


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedModel:
    """One model of the bundle: where its weights come from and where every host keeps them."""

    served_name: str  # what clients put in `model`
    path: str  # the local directory `vllm serve` loads (absolute)
    repo: str  # the Hugging Face repository fetched into `path`; "" when the operator provides it
    weights_gib: float  # the checkpoint's size, for the disk-space check
    route_prefix: str = "/"  # Route C: the Serve application's prefix

    @property
    def fetched(self) -> bool:
        return bool(self.repo)

    @property
    def dir_name(self) -> str:
        """Return the directory's last part (the playbook keeps it under its models root)."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def disk_gib(self) -> int:
        return max(1, int(self.weights_gib * DISK_HEADROOM + 0.999))

    def to_dict(self) -> dict[str, object]:
        return {
            "served_name": self.served_name,
            "path": self.path,
            "repo": self.repo,
            "weights_gib": self.weights_gib,
            "route_prefix": self.route_prefix,
        }


def served_model(spec: PlanSpec, layout: BundleLayout, *, route_prefix: str = "/") -> ServedModel:
    """Return the model of one spec and layout as every host serves it."""
    path = model_ref(spec, layout.weight_dtype)
    repo = (
        ""
        if operator_quantizes(spec, layout.weight_dtype) or spec.hf_repo.startswith("/")
        else spec.hf_repo
    )
    return ServedModel(
        served_name=served_model_name(spec),
        path=path,
        repo=repo,
        weights_gib=round(layout.weights_gib_total, 1),
        route_prefix=route_prefix,
    )
