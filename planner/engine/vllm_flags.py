"""Every `vllm serve` flag the engine emits, for the vLLM version it targets.

Source: vLLM 0.32.0 `vllm/engine/arg_utils.py` (EngineArgs.add_cli_args) and
`vllm/entrypoints/openai/cli_args.py` / `vllm/entrypoints/cli/serve.py` (--host, --port,
--headless); documented at https://docs.vllm.ai/en/v0.32.0/cli/serve/ . Multi-node `mp`
(--nnodes/--node-rank/--master-addr/--master-port/--headless) exists since v0.11.
"""

from __future__ import annotations

VLLM_VERSION = "0.32.0"
SOURCE = (
    "vLLM 0.32.0 engine/arg_utils.py and entrypoints/cli/serve.py; "
    "docs.vllm.ai/en/v0.32.0/cli/serve/"
)

VLLM_SERVE_FLAGS: frozenset[str] = frozenset(
    {
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--max-model-len",
        "--gpu-memory-utilization",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--quantization",
        "--kv-cache-dtype",
        "--hf-overrides",
        "--distributed-executor-backend",
        "--nnodes",
        "--node-rank",
        "--master-addr",
        "--master-port",
        "--headless",
        "--served-model-name",
        "--dtype",
        "--host",
        "--port",
    }
)
