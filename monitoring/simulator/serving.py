"""Token timings of a simulated vLLM server, from ServePlan's own serving model.

The engine (planner.engine, pure) predicts one replica's TTFT and inter-token latency at a
concurrency and request lengths for the simulated GPU, model and tensor parallelism; the
simulator answers requests with those timings at the number of requests it is serving right
now. A profile may run slower than modelled (`decode_slowdown`, `prefill_slowdown`): a real
server seldom matches a plan exactly, and the demo's benchmark then has something to calibrate.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

PROMPT_STEP = 64  # prompt lengths are looked up in steps of this many tokens
OUTPUT_STEP = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class SimHardware:
    """What the simulated server runs on, as the planner's catalog names it."""

    model_slug: str  # catalog model, e.g. "llama-3.1-8b"
    gpu: str  # catalog GPU, e.g. "a100-80g-sxm"
    tp: int = 1
    weight_dtype: str = "bf16"
    max_model_len: int = 8192
    decode_slowdown: float = 1.0  # measured ITL ÷ modelled ITL
    prefill_slowdown: float = 1.0  # measured TTFT ÷ modelled TTFT


@dataclass(frozen=True, slots=True)
class Timing:
    ttft_s: float
    itl_s: float


class ServingModel:
    """TTFT and ITL at a concurrency, cached per (concurrency, length step)."""

    def __init__(self, hardware: SimHardware) -> None:
        self.hardware = hardware
        self._lock = threading.Lock()
        self._spec: object | None = None
        self._broken = False

    def _engine_spec(self) -> object | None:
        with self._lock:
            if self._spec is None and not self._broken:
                try:
                    from planner.engine.spec import spec_from_dict

                    hw = self.hardware
                    self._spec = spec_from_dict(
                        {
                            "model": hw.model_slug,
                            "weight_dtype": hw.weight_dtype,
                            "max_model_len": hw.max_model_len,
                            "hardware": {
                                "node_count": 1,
                                "gpus_per_node": max(hw.tp, 1),
                                "gpu": hw.gpu,
                                "inter_node_gbps": 25,
                                "inter_node_kind": "ethernet",
                                "data_nic": "eth1",
                            },
                        }
                    )
                except Exception:  # noqa: BLE001 - a demo server keeps serving on the fallback
                    self._broken = True
            return self._spec

    def timing(self, *, in_flight: int, prompt_tokens: int, output_tokens: int) -> Timing:
        """Return the TTFT and ITL of a request arriving while `in_flight` are served."""
        prompt = max(PROMPT_STEP, round(prompt_tokens / PROMPT_STEP) * PROMPT_STEP)
        output = max(OUTPUT_STEP, round(output_tokens / OUTPUT_STEP) * OUTPUT_STEP)
        return self._cached(max(1, in_flight), prompt, output)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one model per simulated server, kept for life
    def _cached(self, in_flight: int, prompt: int, output: int) -> Timing:
        hw = self.hardware
        spec = self._engine_spec()
        if spec is not None:
            try:
                from planner.engine.at_concurrency import ReplicaLayout, predict_replica

                point = predict_replica(
                    spec,  # type: ignore[arg-type]
                    ReplicaLayout(gpu=hw.gpu, tp=hw.tp, pp=1, weight_dtype=hw.weight_dtype),
                    concurrency_per_replica=in_flight,
                    avg_input_tokens=prompt,
                    avg_output_tokens=output,
                )
                return Timing(
                    ttft_s=point.ttft_ms / 1000 * hw.prefill_slowdown,
                    itl_s=point.itl_ms / 1000 * hw.decode_slowdown,
                )
            except ValueError:
                pass
        # Without the engine (or a layout that does not fit): a plain roofline-like guess.
        return Timing(
            ttft_s=(0.02 + prompt * 0.00015 * in_flight**0.5) * hw.prefill_slowdown,
            itl_s=(0.012 + 0.0002 * in_flight) * hw.decode_slowdown,
        )
