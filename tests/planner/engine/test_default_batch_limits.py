"""The batch limits `vllm serve` starts with when none are set follow the planned release.

vLLM chose them by the GPU's name up to 0.8.4 (H100/H200 only: PR 12369, PR 16158), by memory
in 0.8.5 (the A100 80 GB included: PR 17073), and by memory without the A100 from 0.9 (PR 17885).
"""

import pytest

from catalog.data import load_gpus
from planner.engine.assumptions import DEFAULT_ASSUMPTIONS as A
from planner.engine.memory import default_batched_tokens, default_max_num_seqs


def _limits(gpu_slug: str, version: str) -> tuple[int, int]:
    gpu = load_gpus()[gpu_slug]
    visible = gpu.driver_visible_gib
    return (
        default_batched_tokens(visible, gpu.slug, A, version),
        default_max_num_seqs(visible, gpu.slug, A, version),
    )


@pytest.mark.parametrize(
    ("gpu", "version", "expected"),
    [
        # 0.8.0-0.8.3: the large token budget by name; V1's 1,024 sequences everywhere.
        ("h100-sxm", "0.8.3", (8192, 1024)),
        ("a100-80g-sxm", "0.8.3", (2048, 1024)),
        # 0.8.4: the others back to 256 sequences; a B200 was not named yet.
        ("h200-sxm", "0.8.4", (8192, 1024)),
        ("b200", "0.8.4", (2048, 256)),
        ("a100-80g-sxm", "0.8.4", (2048, 256)),
        # 0.8.5: by memory, so the A100 80 GB and the B200 too.
        ("a100-80g-sxm", "0.8.5", (8192, 1024)),
        ("b200", "0.8.5", (8192, 1024)),
        # 0.9 on: the A100 left out again; 160 GiB and more the largest budget.
        ("a100-80g-sxm", "0.9.0", (2048, 256)),
        ("h100-sxm", "0.19.0", (8192, 1024)),
        ("b200", "0.19.0", (16384, 1024)),
        ("l40s", "0.19.0", (2048, 256)),
    ],
)
def test_the_defaults_of_each_release(gpu, version, expected):
    assert _limits(gpu, version) == expected


def test_without_a_version_the_planned_release_decides():
    gpu = load_gpus()["a100-80g-sxm"]
    assert default_batched_tokens(gpu.driver_visible_gib, gpu.slug, A) == default_batched_tokens(
        gpu.driver_visible_gib, gpu.slug, A, A.vllm_version
    )


def test_v0_releases_keep_256_sequences():
    assert _limits("h100-sxm", "0.6.3")[1] == 256


def test_a_gpu_below_ampere_keeps_v0s_256_sequences_until_v1_reaches_it():
    # 0.8.0-0.8.3 started V1 with 1,024 sequences everywhere, but a Turing GPU still ran V0
    # (up to 0.10.1), whose profile and scheduler take 256.
    assert _limits("t4", "0.8.3")[1] == 256
    assert _limits("t4", "0.10.1")[1] == 256
