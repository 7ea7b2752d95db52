"""docker run lines: --ipc=host, --network host, the GPUs of each instance, a pinned image."""

from __future__ import annotations

import shlex
from typing import Any


def docker_lines(commands: list[dict[str, Any]], image: str) -> list[dict[str, str]]:
    """Return one docker run line per vLLM process."""
    out = []
    for i, c in enumerate(commands):
        devices = c["env"].get("CUDA_VISIBLE_DEVICES")
        gpus = f'"device={devices}"' if devices else "all"
        argv = c["argv"][1:]  # drop the leading "vllm"; the entrypoint runs it
        line = (
            f"docker run -d --name vllm-{i} --gpus '{gpus}' --ipc=host --network host "
            f"--env-file .env -v /models:/models -v ~/.cache/huggingface:/root/.cache/huggingface "
            f"--entrypoint vllm {image} " + shlex.join(argv)
        )
        out.append({"host": c["host"], "command": line})
    return out
