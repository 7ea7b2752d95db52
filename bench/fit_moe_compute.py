"""Fit how fast vLLM's fused-MoE kernels compute, on NVIDIA's measured kernel tables.

aiconfigurator-core (the optional `aiconfigurator` extra) ships vLLM fused-MoE latencies per GPU,
weight format, expert shape, TP size and token count (1 to 16,384 tokens), measured with vLLM
0.19 to 0.24. bench/fit_moe_kernels.py fitted the expert reads on the decode end of those
tables; this fits the compute end, which prefill and large decode batches reach. The routed-expert
time of one MoE layer on one GPU is modelled as (planner/engine/serving/step.py):

    moe ms = moe_layer_fixed_us
           + touched expert bytes / (HBM × hbm_efficiency × moe_hbm_efficiency × memory speed)
           + routed FLOPs / (bf16 dense TFLOPS × share(format, generation) × n / (n + knee))

n is the expert's intermediate width on one GPU (moe_intermediate_size / TP): thin slices feed
the tensor cores short GEMMs, so the rate falls as TP grows. The reads and the FLOPs add up
rather than overlap: that is what the tables show between 64 and 4,096 tokens.

The grid search minimises the mean |log(fit / measured)| over every balanced-routing row without
expert parallelism of at least 256 tokens, per (format, GPU generation), with one knee for all.
Prints the shares for planner/engine/serving/kernels.py and the knee for assumptions.py, and the
error per group. No benchmark run of ours is used.

int4 (Marlin) is fitted over every token count instead, with a second share for its expert reads
(`moe read share`, dividing the read rate): its tables are about three times slower than the read
term at 1-512 tokens. The other formats keep the read rate the serving runs were validated with:
at decode sizes their tables are slower than the model too (bf16 0.79, block FP8 0.73, MXFP4 0.65
on Hopper), but slowing them moves the held-out runs both ways (docs/benchmarks.md), while int4
has no held-out run and the tables are its only measurement.

The shares were fitted with the unscaled 25 µs fixed part; bench/fit_moe_floors.py later scaled it
per format and generation (0.56-1.48 ×), which moves a layer by at most ~12 µs against compute
terms of hundreds of µs at the >= 256 tokens fitted here, so the shares were not refitted.

Repeat: `.venv/bin/python bench/fit_moe_compute.py` (needs the aiconfigurator extra; ~1 min).
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402  (comes with the aiconfigurator extra)

from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.serving.efficiency import kernel_efficiency  # noqa: E402
from planner.engine.serving.kernels import gpu_generation, kernel_speed  # noqa: E402
from planner.engine.spec import catalog_gpu  # noqa: E402

TABLE_GPUS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm", "b200_sxm": "b200"}
# The tables' weight formats, as the planner names them. fp8 MoE checkpoints (DeepSeek, Qwen3,
# GLM) carry 128 × 128 block scales, so the planner's fp8 takes the block-scaled kernels; gpt-oss
# on Blackwell runs FlashInfer's MXFP4 × BF16 experts, the only mxfp4 rows kept there.
FORMATS = {"bfloat16": "bf16", "fp8_block": "fp8", "int4_wo": "int4", "w4a16_mxfp4": "mxfp4"}
BYTES = {"bf16": 2.0, "fp8": 1.0, "int4": 0.5 + 1 / 64, "mxfp4": 0.5 + 1 / 32}
MIN_TOKENS = 256
READ_FITTED = ("int4",)  # formats whose expert reads are fitted too, over every token count
READ_SHARES = [x / 100 for x in range(10, 121, 2)]
SHARES = [x / 100 for x in range(3, 121)]
KNEES = range(0, 401, 16)
Shares = dict[tuple[str, str], float]  # (format, GPU generation) -> share


def tables() -> pd.DataFrame:
    """Return every usable row with the GPU's datasheet figures and the planner's format."""
    import aiconfigurator_core

    data = Path(aiconfigurator_core.__file__).parent / "systems" / "data"
    frames = []
    for folder, slug in TABLE_GPUS.items():
        gpu = catalog_gpu(slug)
        generation = gpu_generation(slug, gpu.fp8_support)
        for path in sorted((data / folder / "moe" / "vllm").glob("*/moe_perf.parquet")):
            df = pd.read_parquet(path)
            df = df[(df.distribution == "balanced") & (df.moe_ep_size == 1)]
            df = df[df.moe_dtype.isin(FORMATS)]
            df = df[(df.num_tokens >= MIN_TOKENS) | df.moe_dtype.map(FORMATS).isin(READ_FITTED)]
            if generation == "blackwell":
                df = df[(df.moe_dtype != "w4a16_mxfp4") | df.kernel_source.str.contains("gptoss")]
            frames.append(
                df.assign(
                    gpu=slug,
                    generation=generation,
                    peak_flops_ms=gpu.bf16_dense_tflops * 1e12 / 1e3,
                    # The bandwidth the planner gives this GPU's weight reads (efficiency.py).
                    hbm_bytes_ms=gpu.hbm_bandwidth_gbs
                    * 1e9
                    / 1e3
                    * kernel_efficiency(slug, generation).memory,
                    version=path.parent.name,
                )
            )
    df = pd.concat(frames, ignore_index=True)
    df["fmt"] = df.moe_dtype.map(FORMATS)
    df["memory_speed"] = [
        kernel_speed(f, g).memory for f, g in zip(df.fmt, df.generation, strict=True)
    ]
    return df


def modelled_ms(
    df: pd.DataFrame,
    share: pd.Series | float,
    knee: float,
    a: Assumptions,
    read_share: pd.Series | float = 1.0,
):
    """Return the modelled latency of each row (see the module docstring)."""
    n = df.inter_size / df.moe_tp_size
    touched = 1 - (1 - df.topk / df.num_experts) ** (a.moe_routing_token_share * df.num_tokens)
    expert_bytes = df.num_experts * 3 * df.hidden_size * n * df.fmt.map(BYTES)
    read = expert_bytes * touched / (df.hbm_bytes_ms * a.hbm_efficiency * a.moe_hbm_efficiency)
    flops = 2 * 3 * df.num_tokens * df.topk * df.hidden_size * n
    compute = flops / (df.peak_flops_ms * share * n / (n + knee))
    return a.moe_layer_fixed_us / 1e3 + read / (df.memory_speed * read_share) + compute


def fit(df: pd.DataFrame, a: Assumptions) -> tuple[Shares, Shares, int, float]:
    """Return (compute share and read share per (format, generation), knee, mean |log error|)
    by grid search; the read share is 1 but for READ_FITTED formats."""
    groups = list(df.groupby(["fmt", "generation"]).groups.items())
    best: tuple[float, int, Shares, Shares] | None = None
    for knee in KNEES:
        shares, reads, total = {}, {}, 0.0
        for key, index in groups:
            part = df.loc[index]
            err, shares[key], reads[key] = _fit_group(part, key[0], knee, a)
            total += err * len(part)
        if best is None or total < best[0]:
            best = (total, knee, shares, reads)
    assert best is not None
    return best[2], best[3], best[1], best[0] / len(df)


def _fit_group(
    part: pd.DataFrame, fmt: str, knee: int, a: Assumptions
) -> tuple[float, float, float]:
    """Return (mean |log error|, compute share, read share) of one (format, generation)."""
    read_unit = modelled_ms(part, math.inf, knee, a) - a.moe_layer_fixed_us / 1e3  # reads at 1
    unit = modelled_ms(part, 1.0, knee, a) - modelled_ms(part, math.inf, knee, a)  # compute at 1
    fixed = a.moe_layer_fixed_us / 1e3
    trials = READ_SHARES if fmt in READ_FITTED else [1.0]
    return min(
        (_log_err(fixed + read_unit / r + unit / s, part.latency), s, r)
        for r in trials
        for s in SHARES
    )


def _log_err(fit_ms: pd.Series, measured_ms: pd.Series) -> float:
    return float((fit_ms / measured_ms).map(math.log).abs().mean())


def main() -> None:
    a = Assumptions()
    df = tables()
    shares, reads, knee, err = fit(df, a)
    print(f"moe_shard_knee: {knee}")
    print("MoE compute share of the dense BF16 peak (kernels.py):")
    for (fmt, gen), share in sorted(shares.items()):
        print(f"  ({fmt!r}, {gen!r}): {share}")
    print("MoE read share of the expert read rate (kernels.py), fitted for", READ_FITTED)
    for (fmt, gen), read in sorted(reads.items()):
        if fmt in READ_FITTED:
            print(f"  ({fmt!r}, {gen!r}): {read}")
    print(f"mean |log error| over {len(df)} rows: {err:.3f} (x{math.exp(err):.2f})")
    keys = list(zip(df.fmt, df.generation, strict=True))
    fitted = df.assign(share=[shares[k] for k in keys], read=[reads[k] for k in keys])
    fitted["ratio"] = modelled_ms(fitted, fitted.share, knee, a, fitted.read) / fitted.latency
    by = defaultdict(list)
    for (fmt, gen, tokens), part in fitted.groupby(["fmt", "generation", "num_tokens"]):
        by[(fmt, gen)].append(f"{tokens}:{part.ratio.median():.2f}")
    print("median fit / measured by token count:")
    for key, cells in sorted(by.items()):
        print(f"  {key}: {' '.join(cells)}")


if __name__ == "__main__":
    main()
