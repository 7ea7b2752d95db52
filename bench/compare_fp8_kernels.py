"""How much faster fp8 weights are than bf16 in aiconfigurator-core's measured vLLM kernel tables.

Prints, per GPU, the bf16/fp8 time ratio of the dense GEMMs of a decode pass (ideal 2: half the
bytes) and of a long prefill (the tensor-core speed-up), and of the routed-expert (MoE) ops read
from the per-tensor and the block-quantized fp8 tables. The evidence behind the fp8 mapping in
planner/engine/serving/aiconfigurator.py and the note on planner/engine/serving/kernels.py.

Repeat: `.venv/bin/python bench/compare_fp8_kernels.py` (needs the aiconfigurator extra).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.data import load_models  # noqa: E402
from planner.engine.serving import aiconfigurator as aic  # noqa: E402


def _ms(ops, part: str) -> float:
    return sum(o[1] for o in ops if part in o[0])


def main() -> None:
    logging.disable(logging.WARNING)
    models = load_models()
    dense, moe = models["llama-3.1-8b"].config, models["qwen3-30b-a3b"].config
    for gpu in ("h100-sxm", "h200-sxm", "l40s"):
        bf16 = aic.compiled(dense, gpu_slug=gpu, tp=1, dtype="bf16", kv="bfloat16")
        fp8 = aic.compiled(dense, gpu_slug=gpu, tp=1, dtype="fp8", kv="bfloat16")
        for b in (1, 8, 64):
            ratio = _ms(bf16.decode_step_per_op(b, 1024, 1), "gemm") / _ms(
                fp8.decode_step_per_op(b, 1024, 1), "gemm"
            )
            print(f"{gpu:<9} dense decode b={b:<5} bf16/fp8 {ratio:4.2f}")
        for p in (2048, 8192):
            ratio = _ms(bf16.mixed_step_breakdown_per_op(p, 0, p, 1, 0)[0], "gemm") / _ms(
                fp8.mixed_step_breakdown_per_op(p, 0, p, 1, 0)[0], "gemm"
            )
            print(f"{gpu:<9} dense prefill {p:<5} bf16/fp8 {ratio:4.2f}")
    aic.QUANT["fp8-per-tensor-experts"] = ("fp8", "fp8")  # the mapping not taken, for contrast
    for gpu in ("h100-sxm", "h200-sxm"):
        bf16 = aic.compiled(moe, gpu_slug=gpu, tp=1, dtype="bf16", kv="bfloat16")
        per_tensor = aic.compiled(
            moe, gpu_slug=gpu, tp=1, dtype="fp8-per-tensor-experts", kv="bfloat16"
        )
        block = aic.compiled(moe, gpu_slug=gpu, tp=1, dtype="fp8", kv="bfloat16")
        for b in (1, 8, 64):
            base = _ms(bf16.decode_step_per_op(b, 1024, 1), "moe")
            print(
                f"{gpu:<9} MoE decode b={b:<3} bf16/fp8 per-tensor "
                f"{base / _ms(per_tensor.decode_step_per_op(b, 1024, 1), 'moe'):4.2f}"
                f"  block {base / _ms(block.decode_step_per_op(b, 1024, 1), 'moe'):4.2f}"
            )


if __name__ == "__main__":
    main()
