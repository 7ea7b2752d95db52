"""A simulated vLLM 0.32 server: /metrics with the families, labels and buckets of the real one."""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from .load import LoadModel
from .serving import ServingModel, SimHardware

# Bucket bounds as vLLM 0.32 exposes them (checked against a recorded payload).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
                7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
               10.0, 20.0, 40.0, 80.0)  # fmt: skip
REQUEST_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
                   60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)  # fmt: skip
FINISHED_REASONS = (("stop", 0.70), ("length", 0.27), ("abort", 0.025), ("error", 0.005))
ALL_REASONS = ("stop", "length", "abort", "error", "repetition")


def _pick_reason(r: float) -> str:
    for reason, share in FINISHED_REASONS:
        r -= share
        if r <= 0:
            return reason
    return FINISHED_REASONS[0][0]


class _Hist:
    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def family(self, name: str, doc: str, labels: dict[str, str], created: float) -> Metric:
        fam = HistogramMetricFamily(name, doc, labels=list(labels))
        cumulative, buckets = 0, []
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else repr(float(bound)), cumulative))
        fam.add_metric(list(labels.values()), buckets, self.sum)
        fam.samples.append(Sample(name + "_created", labels, created))
        return fam


@dataclass(slots=True, kw_only=True)
class VllmProfile:
    """What a simulated server serves and how fast it is."""

    name: str
    model: str
    base_rps: float = 2.0
    max_num_seqs: int = 64
    num_gpu_blocks: int = 8192
    block_size: int = 16
    max_model_len: int = 8192
    mean_prompt_tokens: int = 600
    mean_output_tokens: int = 220
    itl_s: float = 0.025
    prefix_hit_ratio: float = 0.4
    restart_every_s: float | None = None
    restart_down_s: float = 8.0
    slow_probability: float = 0.0
    slow_delay_s: float = 12.0
    seed: int = 0
    # What the OpenAI API's token timings are modelled on (serving.py).
    hardware: SimHardware | None = None


@dataclass(slots=True)
class SimVllm:
    """State of one simulated vLLM server, advanced lazily whenever it is scraped."""

    profile: VllmProfile
    day_s: float = 1800.0
    load: LoadModel = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: float = field(init=False)
    last: float = field(init=False)
    counters: dict[str, float] = field(init=False)
    finished: dict[str, int] = field(init=False)
    http: dict[tuple[str, str, str], int] = field(init=False)
    hists: dict[str, _Hist] = field(init=False)
    running: float = 0.0
    waiting: float = 0.0
    kv_usage: float = 0.0
    _cache: tuple[float, bytes] | None = None
    _down_until: float = 0.0
    live_requests: int = 0  # OpenAI requests being answered now
    serving: ServingModel = field(init=False)

    def __post_init__(self) -> None:
        p = self.profile
        self.load = LoadModel(p.base_rps, day_s=self.day_s, phase=(p.seed % 7) / 7, seed=p.seed)
        self.serving = ServingModel(
            p.hardware or SimHardware(model_slug="", gpu="", max_model_len=p.max_model_len)
        )
        self._reset(time.time())

    def begin_request(self) -> int:
        """Count an OpenAI request in; return how many are being served with it."""
        with self.lock:
            self.live_requests += 1
            return self.live_requests

    def end_request(
        self,
        *,
        prompt_tokens: int,
        output_tokens: int,
        ttft_s: float,
        itls_s: list[float],
        e2e_s: float,
        complete: bool,
    ) -> None:
        """Account an answered (or abandoned) request in the counters and histograms."""
        with self.lock:
            self.live_requests -= 1
            self.counters["prompt"] += prompt_tokens
            self.counters["generation"] += output_tokens
            self.counters["prefix_queries"] += prompt_tokens
            self.finished["length" if complete else "abort"] += 1
            if output_tokens:
                self.hists["ttft"].observe(ttft_s)
                self.hists["e2e"].observe(e2e_s)
                self.hists["queue"].observe(0.0)
            for gap in itls_s:
                self.hists["itl"].observe(gap)
            key = ("/v1/completions", "POST", "2xx")
            self.http[key] = self.http.get(key, 0) + 1

    def _reset(self, now: float) -> None:
        self.started = now
        self.last = now
        self.counters = dict.fromkeys(
            ("prompt", "generation", "preemptions", "prefix_queries", "prefix_hits"), 0.0
        )
        self.finished = dict.fromkeys(ALL_REASONS, 0)
        self.http = {("/v1/completions", "POST", "2xx"): 0, ("/v1/models", "GET", "2xx"): 0}
        self.hists = {
            "ttft": _Hist(TTFT_BUCKETS),
            "itl": _Hist(ITL_BUCKETS),
            "e2e": _Hist(REQUEST_BUCKETS),
            "queue": _Hist(REQUEST_BUCKETS),
        }
        self.running = self.waiting = self.kv_usage = 0.0
        self._cache = None

    @property
    def capacity_tokens(self) -> int:
        return self.profile.num_gpu_blocks * self.profile.block_size

    def is_down(self, now: float) -> bool:
        """Return True while the server is 'restarting' (answers 503), resetting on the way."""
        p = self.profile
        with self.lock:
            if p.restart_every_s and now - self.started >= p.restart_every_s:
                self._down_until = now + p.restart_down_s
                self._reset(self._down_until)
            return now < self._down_until

    def advance(self, now: float) -> None:
        """Account the requests that finished since the last scrape."""
        p = self.profile
        dt = now - self.last
        if dt <= 0:
            return
        self.last = now
        rng = self.load.rng
        n = self.load.arrivals(now, dt)
        rps = self.load.rps(now)
        e2e_mean = p.mean_output_tokens * p.itl_s + 0.2
        concurrency = rps * e2e_mean  # Little's law
        utilization = min(concurrency / p.max_num_seqs, 3.0)
        self.running = min(float(p.max_num_seqs), round(concurrency * rng.uniform(0.8, 1.2)))
        self.waiting = max(0.0, round(concurrency - p.max_num_seqs))
        ctx = p.mean_prompt_tokens + p.mean_output_tokens / 2
        self.kv_usage = min(1.0, self.running * ctx / self.capacity_tokens)
        congestion = 1.0 + 4.0 * max(0.0, utilization - 0.7) ** 2
        for _ in range(n):
            prompt = max(1, int(rng.lognormvariate(0, 0.6) * p.mean_prompt_tokens))
            output = max(1, int(rng.lognormvariate(0, 0.5) * p.mean_output_tokens))
            queue = rng.expovariate(1.0) * 0.02 * congestion + max(0.0, utilization - 1.0) * 2.0
            ttft = queue + prompt * 0.00015 * congestion * rng.uniform(0.7, 1.6)
            itl = p.itl_s * congestion * rng.lognormvariate(0, 0.2)
            self.hists["queue"].observe(queue)
            self.hists["ttft"].observe(ttft)
            self.hists["itl"].observe(itl)
            self.hists["e2e"].observe(ttft + itl * output)
            self.counters["prompt"] += prompt
            self.counters["generation"] += output
            self.counters["prefix_queries"] += prompt
            self.counters["prefix_hits"] += int(prompt * p.prefix_hit_ratio * rng.uniform(0.7, 1.3))
            reason = _pick_reason(rng.random())
            self.finished[reason] += 1
            status = "2xx" if reason != "error" else "5xx"
            key = ("/v1/completions", "POST", status)
            self.http[key] = self.http.get(key, 0) + 1
        if rng.random() < 0.02 * n:
            key = ("/v1/completions", "POST", "4xx")
            self.http[key] = self.http.get(key, 0) + 1
        if self.kv_usage > 0.9:
            self.counters["preemptions"] += rng.randint(0, max(1, n // 10))

    def metrics(self, now: float) -> bytes:
        """Return the /metrics text (re-rendered at most once a second)."""
        with self.lock:
            if self._cache is not None and now - self._cache[0] < 1.0:
                return self._cache[1]
            self.advance(now)
            body = generate_latest(_Collector(self))
            self._cache = (now, body)
            return body

    def version(self) -> bytes:
        return b'{"version":"0.32.0"}'

    def models(self) -> bytes:
        return json.dumps(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.profile.model,
                        "object": "model",
                        "created": int(self.started),
                        "owned_by": "vllm",
                        "root": self.profile.model,
                        "parent": None,
                        "max_model_len": self.profile.max_model_len,
                    }
                ],
            }
        ).encode()


class _Collector:
    def __init__(self, sim: SimVllm) -> None:
        self.sim = sim

    def collect(self) -> Iterator[Metric]:
        sim, p = self.sim, self.sim.profile
        created = sim.started
        model = {"engine": "0", "model_name": p.model}
        names, values = list(model), list(model.values())
        start = GaugeMetricFamily(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            value=sim.started,
        )
        yield start
        for name, doc, value in (
            ("vllm:num_requests_running", "Number of requests in model execution batches.",
             sim.running + sim.live_requests),
            ("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
             sim.waiting),
        ):  # fmt: skip
            g = GaugeMetricFamily(name, doc, labels=names)
            g.add_metric(values, value)
            yield g
        g = GaugeMetricFamily(
            "vllm:num_requests_waiting_by_reason",
            "Number of waiting requests by reason.",
            labels=[*names, "reason"],
        )
        g.add_metric([*values, "capacity"], sim.waiting)
        g.add_metric([*values, "deferred"], 0.0)
        yield g
        g = GaugeMetricFamily(
            "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels=names
        )
        ctx = p.mean_prompt_tokens + p.mean_output_tokens / 2
        g.add_metric(values, min(1.0, sim.kv_usage + sim.live_requests * ctx / sim.capacity_tokens))
        yield g
        for name, doc, key in (
            ("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried "
             "tokens.", "prefix_queries"),
            ("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
             "prefix_hits"),
            ("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
             "preemptions"),
            ("vllm:prompt_tokens", "Number of prefill tokens processed.", "prompt"),
            ("vllm:generation_tokens", "Number of generation tokens processed.", "generation"),
        ):  # fmt: skip
            c = CounterMetricFamily(name, doc, labels=names)
            c.add_metric(values, sim.counters[key], created=created)
            yield c
        c = CounterMetricFamily(
            "vllm:request_success",
            "Count of successfully processed requests.",
            labels=[*names, "finished_reason"],
        )
        for reason in ALL_REASONS:
            c.add_metric([*values, reason], float(sim.finished[reason]), created=created)
        yield c
        for key, name, doc in (
            ("ttft", "vllm:time_to_first_token_seconds",
             "Histogram of time to first token in seconds."),
            ("itl", "vllm:inter_token_latency_seconds",
             "Histogram of inter-token latency in seconds."),
            ("e2e", "vllm:e2e_request_latency_seconds",
             "Histogram of e2e request latency in seconds."),
            ("queue", "vllm:request_queue_time_seconds",
             "Histogram of time spent in WAITING phase for request."),
        ):  # fmt: skip
            yield sim.hists[key].family(name, doc, model, created)
        info = GaugeMetricFamily(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            labels=[
                "block_size", "cache_dtype", "enable_prefix_caching", "engine",
                "gpu_memory_utilization", "kv_cache_max_concurrency", "kv_cache_size_tokens",
                "num_cpu_blocks", "num_gpu_blocks", "sliding_window",
            ],
        )  # fmt: skip
        info.add_metric(
            [
                str(p.block_size), "auto", "True", "0", "0.9",
                repr(sim.capacity_tokens / 8192), str(sim.capacity_tokens), "None",
                str(p.num_gpu_blocks), "None",
            ],
            1.0,
        )  # fmt: skip
        yield info
        c = CounterMetricFamily(
            "http_requests",
            "Total number of requests by method, status and handler.",
            labels=["handler", "method", "status"],
        )
        for (handler, method, status), count in sorted(sim.http.items()):
            c.add_metric([handler, method, status], float(count), created=created)
        yield c
