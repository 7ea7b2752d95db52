"""Write SYNTHESIZED old-version vLLM payloads (no old vLLM can run here) as fixtures.

Names, types, labels and bucket bounds follow vLLM's own metric definitions of those versions:
- v0.6 (V0 engine): `gpu_cache_usage_perc`, `gpu_prefix_cache_hit_rate` (gauge),
  `time_per_output_token_seconds`, the throughput gauges `avg_*_throughput_toks_per_s`,
  `num_requests_swapped`, labels `model_name` only.
- v0.8 (early V1 engine): `gpu_cache_usage_perc`, `gpu_prefix_cache_queries/hits_total`
  counters, `time_per_output_token_seconds`, labels `model_name` and `engine`.
Each file starts with a `# SYNTHESIZED` comment line (ignored by Prometheus parsers).
Two snapshots per version, 15 s apart, with consistent counter and histogram growth.

Run: .venv/bin/python tests/monitoring/recorders/synth_vllm_old.py [OUT_DIR]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.samples import Sample

TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
TPOT = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
E2E = (1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0)
MODEL = "meta-llama/Meta-Llama-3-8B-Instruct"
START = 1_790_000_000.0


class State:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.counters = {"prompt": 0.0, "generation": 0.0, "preemptions": 0.0}
        self.prefix = {"queries": 0.0, "hits": 0.0}
        self.finished = {"stop": 0.0, "length": 0.0, "abort": 0.0}
        self.hists = {name: [0] * (len(b) + 1) for name, b in
                      (("ttft", TTFT), ("tpot", TPOT), ("e2e", E2E), ("queue", E2E))}  # fmt: skip
        self.sums = dict.fromkeys(self.hists, 0.0)

    def observe(self, name: str, bounds: tuple[float, ...], value: float) -> None:
        index = next((i for i, b in enumerate(bounds) if value <= b), len(bounds))
        self.hists[name][index] += 1
        self.sums[name] += value

    def run(self, requests: int) -> None:
        for _ in range(requests):
            prompt = int(self.rng.lognormvariate(6.2, 0.5))
            output = int(self.rng.lognormvariate(5.2, 0.4))
            ttft = self.rng.lognormvariate(-2.5, 0.6)
            tpot = self.rng.lognormvariate(-3.6, 0.2)
            self.observe("ttft", TTFT, ttft)
            for _ in range(3):  # V0 observed per output token; sampled here
                self.observe("tpot", TPOT, tpot * self.rng.uniform(0.8, 1.2))
            self.observe("e2e", E2E, ttft + tpot * output)
            self.observe("queue", E2E, self.rng.expovariate(50))
            self.counters["prompt"] += prompt
            self.counters["generation"] += output
            self.prefix["queries"] += prompt
            self.prefix["hits"] += int(prompt * 0.35)
            r = self.rng.random()
            self.finished["stop" if r < 0.7 else "length" if r < 0.98 else "abort"] += 1


def _hist(name: str, doc: str, labels: dict[str, str], bounds: tuple[float, ...],
          counts: list[int], total: float) -> HistogramMetricFamily:  # fmt: skip
    fam = HistogramMetricFamily(name, doc, labels=list(labels))
    cumulative, buckets = 0, []
    for bound, count in zip((*bounds, float("inf")), counts, strict=True):
        cumulative += count
        buckets.append(("+Inf" if bound == float("inf") else repr(float(bound)), cumulative))
    fam.add_metric(list(labels.values()), buckets, total)
    fam.samples.append(Sample(name + "_created", labels, START))
    return fam


class Collector:
    def __init__(self, state: State, version: str, running: float, waiting: float) -> None:
        self.s, self.version, self.running, self.waiting = state, version, running, waiting

    def collect(self):  # type: ignore[no-untyped-def]
        s = self.s
        labels = {"model_name": MODEL}
        if self.version == "0.8":
            labels["engine"] = "0"
        names, values = list(labels), list(labels.values())
        doc = "Start time of the process since unix epoch in seconds."
        yield GaugeMetricFamily("process_start_time_seconds", doc, START)
        gauges = [
            ("vllm:num_requests_running", "Number of requests currently running on GPU.",
             self.running),
            ("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
             self.waiting),
            ("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.",
             0.41),
        ]  # fmt: skip
        if self.version == "0.6":
            gauges += [
                ("vllm:num_requests_swapped", "Number of requests swapped to CPU.", 0.0),
                ("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.",
                 0.0),
                ("vllm:gpu_prefix_cache_hit_rate", "GPU prefix cache block hit rate.", 0.35),
                ("vllm:cpu_prefix_cache_hit_rate", "CPU prefix cache block hit rate.", -1.0),
                ("vllm:avg_prompt_throughput_toks_per_s",
                 "Average prefill throughput in tokens/s.", 1834.2),
                ("vllm:avg_generation_throughput_toks_per_s",
                 "Average generation throughput in tokens/s.", 612.7),
            ]  # fmt: skip
        for name, doc, value in gauges:
            g = GaugeMetricFamily(name, doc, labels=names)
            g.add_metric(values, value)
            yield g
        counters = [
            ("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
             s.counters["preemptions"]),
            ("vllm:prompt_tokens", "Number of prefill tokens processed.", s.counters["prompt"]),
            ("vllm:generation_tokens", "Number of generation tokens processed.",
             s.counters["generation"]),
        ]  # fmt: skip
        if self.version == "0.8":
            counters += [
                ("vllm:gpu_prefix_cache_queries", "GPU prefix cache queries, in terms of number "
                 "of queried blocks.", s.prefix["queries"]),
                ("vllm:gpu_prefix_cache_hits", "GPU prefix cache hits, in terms of number of "
                 "cached blocks.", s.prefix["hits"]),
            ]  # fmt: skip
        for name, doc, value in counters:
            c = CounterMetricFamily(name, doc, labels=names)
            c.add_metric(values, value, created=START)
            yield c
        c = CounterMetricFamily("vllm:request_success",
                                "Count of successfully processed requests.",
                                labels=[*names, "finished_reason"])  # fmt: skip
        for reason, value in s.finished.items():
            c.add_metric([*values, reason], value, created=START)
        yield c
        for key, name, doc, bounds in (
            ("ttft", "vllm:time_to_first_token_seconds",
             "Histogram of time to first token in seconds.", TTFT),
            ("tpot", "vllm:time_per_output_token_seconds",
             "Histogram of time per output token in seconds.", TPOT),
            ("e2e", "vllm:e2e_request_latency_seconds",
             "Histogram of end to end request latency in seconds.", E2E),
            ("queue", "vllm:request_queue_time_seconds",
             "Histogram of time spent in WAITING phase for request.", E2E),
        ):  # fmt: skip
            yield _hist(name, doc, labels, bounds, s.hists[key], s.sums[key])
        info_labels = {
            "block_size": "16", "cache_dtype": "auto", "cpu_offload_gb": "0",
            "enable_prefix_caching": "True" if self.version == "0.8" else "False",
            "gpu_memory_utilization": "0.9", "is_attention_free": "False",
            "num_cpu_blocks": "2048", "num_gpu_blocks": "27910",
            "num_gpu_blocks_override": "None", "sliding_window": "None",
            "swap_space_bytes": "4294967296",
        }  # fmt: skip
        if self.version == "0.8":
            info_labels["engine"] = "0"
        g = GaugeMetricFamily("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                              labels=list(info_labels))  # fmt: skip
        g.add_metric(list(info_labels.values()), 1.0)
        yield g


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1] / "fixtures/vllm")
    for version in ("0.6", "0.8"):
        state = State(seed=6 if version == "0.6" else 8)
        state.run(400)
        for suffix, extra, running, waiting in (("a", 0, 14.0, 2.0), ("b", 45, 17.0, 0.0)):
            state.run(extra)
            body = generate_latest(Collector(state, version, running, waiting)).decode()
            header = (f"# SYNTHESIZED vLLM v{version}-era /metrics (not captured from a server); "
                      "snapshot b is 15 s after a\n")  # fmt: skip
            name = f"v{version.replace('.', '_')}_synth_metrics_{suffix}.txt"
            (out / name).write_text(header + body)
            print("wrote", out / name)


if __name__ == "__main__":
    main()
