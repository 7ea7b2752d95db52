"""docker run lines: --ipc=host, --network host, the GPUs of each instance, a pinned image."""

from __future__ import annotations

import shlex
from typing import Any

_COMMON = (
    "--ipc=host --network host --env-file .env -v /models:/models "
    "-v ~/.cache/huggingface:/root/.cache/huggingface"
)


def docker_lines(
    commands: list[dict[str, Any]], image: str, ray_lines: list[dict[str, Any]] | None = None
) -> list[dict[str, str]]:
    """Return one docker line per process: Ray nodes first (Ray backend), then vLLM."""
    out: list[dict[str, str]] = []
    if ray_lines:
        # Ray mode: every node runs `ray start --block` inside the vLLM image (same Ray
        # version everywhere); vllm serve then runs inside the head's container.
        for r in ray_lines:
            start = r["command"].removeprefix("ray ")
            out.append(
                {
                    "host": r["host"],
                    "command": f"docker run -d --name ray-{r['host']} --gpus all {_COMMON} "
                    f"--entrypoint ray {image} {start} --block",
                }
            )
        head = ray_lines[0]["host"]
        for c in commands:
            out.append(
                {
                    "host": c["host"],
                    "command": f"docker exec -d ray-{head} " + shlex.join(c["argv"]),
                }
            )
        return out
    for i, c in enumerate(commands):
        devices = c["env"].get("CUDA_VISIBLE_DEVICES")
        gpus = f'"device={devices}"' if devices else "all"
        argv = c["argv"][1:]  # drop the leading "vllm"; the entrypoint runs it
        line = (
            f"docker run -d --name vllm-{i} --gpus '{gpus}' {_COMMON} "
            f"--entrypoint vllm {image} " + shlex.join(argv)
        )
        out.append({"host": c["host"], "command": line})
    return out
