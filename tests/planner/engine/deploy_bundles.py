"""Bundles of every route and backend with their deployment files, written out as an archive."""

from __future__ import annotations

from pathlib import Path

import yaml

from planner.engine import plan, spec_from_dict
from planner.engine.configs.bundle import Bundle, build_bundle
from planner.engine.configs.deploy.ansible_yaml import Unsafe
from planner.engine.configs.deploy.files import Registration, deploy_files
from planner.engine.configs.layout import BundleLayout, Variant, variants
from tests.planner.engine.pool.pool_bundles import a100_pool_bundle, shared_gpu_bundle

PLAN_ID = "0b3c6a1e-1111-4222-8333-444455556666"


class UnsafeLoader(yaml.SafeLoader):
    """Reads !unsafe as Ansible does: the text, marked."""


UnsafeLoader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))


def nodes(n: int, gpus: int, *, base: str = "10.0.0.", first: int = 11) -> list[dict]:
    return [
        {
            "hostname": f"h{i + 1}",
            "address": f"{base}{first + i}",
            "gpu": "a100-80g-sxm",
            "gpu_count": gpus,
            "nics": [{"name": "eth1", "speed_gbps": 25, "role": "data"}],
        }
        for i in range(n)
    ]


def every_variant() -> dict[str, Bundle]:
    """Return one bundle per route and backend: single, A, B with mp, B with Ray, C, and a
    pool's Route A."""
    out: dict[str, Bundle] = {}
    specs = (
        {"model": "qwen2.5-32b", "hardware": {"nodes": nodes(1, 4)}},
        {
            "model": "qwen2.5-32b",
            "workload": {"concurrency": 32},
            "hardware": {"nodes": nodes(2, 4)},
        },
        {
            "model": "qwen2.5-72b",
            "max_model_len": 65536,
            "rope_scaling_factor": 4,
            "workload": {"concurrency": 16, "avg_input_tokens": 1200},
            "hardware": {"nodes": nodes(2, 4)},
        },
    )
    for spec_dict in specs:
        spec = spec_from_dict(spec_dict)
        best = plan(spec).best
        layout = BundleLayout.from_candidate(best)
        for variant in variants(layout):
            out.setdefault(variant.key, build_bundle(spec, layout, spec.hardware.nodes, variant))
    out["pool-A"] = a100_pool_bundle()  # several models behind one LiteLLM proxy
    out["pool-A-shared"] = shared_gpu_bundle()  # two models' servers per GPU, one after the other
    return out


def write_archive(bundle: Bundle, root: Path, registration: Registration) -> dict[str, str]:
    """Write the bundle as the operator unpacks it; return its files."""
    files = {**bundle.file_map(), **{f.name: f.text for f in deploy_files(bundle, registration)}}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith(".sh"):
            path.chmod(0o755)
    return files


__all__ = ["PLAN_ID", "Variant", "every_variant", "nodes", "write_archive"]
