"""Build a tiny random-weight Llama, then serve it with the real vLLM CPU server.

Run with the vLLM venv's python (scripts/ensure-vllm-venv), never ServePlan's:
    VLLM_PY tests/integration/vllm_tiny_server.py WORK_DIR PORT
Nothing is downloaded: the tokenizer is trained locally and the weights are random.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "monitoring" / "recorders"))

from record_vllm import build_model  # noqa: E402 - path set just above


def main() -> None:
    work, port = Path(sys.argv[1]), sys.argv[2]
    model_dir = work / "tiny-llama"
    if not (model_dir / "config.json").exists():
        build_model(model_dir)
    os.environ.update(
        VLLM_CPU_KVCACHE_SPACE="1",
        HF_HUB_OFFLINE="1",
        VLLM_HOST_IP="127.0.0.1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    args = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", "tiny-llama",
        "--host", "127.0.0.1", "--port", port,
        "--max-model-len", "512", "--dtype", "bfloat16", "--enforce-eager",
    ]  # fmt: skip
    os.execv(sys.executable, args)


if __name__ == "__main__":
    main()
