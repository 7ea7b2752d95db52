"""The keys every target stores (poll and scrape health) and a vLLM server's own."""

from __future__ import annotations

from monitoring.scrape.series_spec import GAUGE, RATE, RATIO, SeriesSpec, quantiles

VLLM_SERIES: tuple[SeriesSpec, ...] = (
    # --- every target ---
    SeriesSpec("scrape.duration_seconds", GAUGE, (), "poll", "time the poll took"),
    SeriesSpec("scrape.payload_bytes", GAUGE, (), "poll", "bytes of metrics text read"),
    SeriesSpec(
        "scrape.samples_skipped",
        GAUGE,
        (),
        "poll",
        "samples dropped as unreadable (non-numeric value, blank sentinel, out of range)",
    ),
    SeriesSpec("poll.up", GAUGE, (), "poller", "1 when the poll succeeded, 0 when it failed"),
    SeriesSpec(
        "poll.consecutive_failures", GAUGE, (), "poller", "failed polls in a row (0 when up)"
    ),
    SeriesSpec("poll.duration_ms", GAUGE, (), "poller", "wall time of the poll and its storage"),
    SeriesSpec(
        "poll.missed",
        GAUGE,
        (),
        "poller",
        "polls that should have run since the previous one and did not (stored when > 0)",
    ),
    SeriesSpec(
        "poll.overdue_intervals",
        GAUGE,
        (),
        "poller, scheduler",
        "intervals the target's polls are overdue by (0 at each poll; the polls-stopped alert)",
    ),
    # --- vLLM gauges ---
    SeriesSpec("vllm.requests_running", GAUGE, (), "vllm:num_requests_running", "requests running"),
    SeriesSpec("vllm.requests_waiting", GAUGE, (), "vllm:num_requests_waiting", "requests waiting"),
    SeriesSpec(
        "vllm.requests_waiting_by_reason",
        GAUGE,
        ("reason",),
        "vllm:num_requests_waiting_by_reason",
        "waiting requests by reason (capacity, deferred)",
    ),
    SeriesSpec(
        "vllm.kv_cache_usage_pct",
        GAUGE,
        (),
        "vllm:kv_cache_usage_perc (old: gpu_cache_usage_perc)",
        "KV-cache blocks in use, 0-100 (mean over engines)",
    ),
    SeriesSpec(
        "vllm.kv_cache_blocks", GAUGE, (), "cache_config_info num_gpu_blocks", "KV blocks (sum)"
    ),
    SeriesSpec(
        "vllm.kv_cache_block_size_tokens", GAUGE, (), "cache_config_info block_size", "block size"
    ),
    SeriesSpec(
        "vllm.kv_cache_capacity_tokens",
        GAUGE,
        (),
        "cache_config_info kv_cache_size_tokens (or blocks x block size)",
        "live KV capacity in tokens, summed over engines",
    ),
    SeriesSpec(
        "vllm.kv_cache_max_concurrency",
        GAUGE,
        (),
        "cache_config_info kv_cache_max_concurrency",
        "full-length requests that fit in the KV cache",
    ),
    SeriesSpec(
        "vllm.gpu_memory_utilization_ratio",
        GAUGE,
        (),
        "cache_config_info gpu_memory_utilization",
        "configured --gpu-memory-utilization",
    ),
    # --- vLLM derived ---
    SeriesSpec(
        "vllm.prompt_tokens_per_s",
        RATE,
        (),
        "vllm:prompt_tokens_total (old: avg_prompt_throughput_toks_per_s)",
        "prefill tokens per second",
    ),
    SeriesSpec(
        "vllm.generation_tokens_per_s",
        RATE,
        (),
        "vllm:generation_tokens_total (old: avg_generation_throughput_toks_per_s)",
        "generated tokens per second",
    ),
    SeriesSpec(
        "vllm.requests_finished_per_s",
        RATE,
        ("finished_reason",),
        "vllm:request_success_total",
        "finished requests per second by reason (stop, length, abort, error, ...)",
    ),
    SeriesSpec("vllm.requests_per_s", RATE, (), "vllm:request_success_total", "all finished"),
    SeriesSpec(
        "vllm.completion_ratio",
        RATIO,
        (),
        "vllm:request_success_total",
        "(stop + length) / all finished, 0-1",
    ),
    SeriesSpec("vllm.preemptions_per_s", RATE, (), "vllm:num_preemptions_total", "preemptions/s"),
    SeriesSpec(
        "vllm.prefix_cache_hit_ratio",
        RATIO,
        (),
        "vllm:prefix_cache_hits/queries (old: gpu_prefix_cache_*, gpu_prefix_cache_hit_rate)",
        "hit tokens / queried tokens between two polls, 0-1",
    ),
    SeriesSpec(
        "vllm.http_requests_per_s",
        RATE,
        ("status",),
        "http_requests_total",
        "HTTP requests per second by status class (2xx, 4xx, 5xx)",
    ),
    SeriesSpec("vllm.http_errors_per_s", RATE, (), "http_requests_total", "non-2xx per second"),
    *quantiles("vllm.ttft_seconds", (), "vllm:time_to_first_token_seconds", "time to first token"),
    *quantiles(
        "vllm.inter_token_latency_seconds",
        (),
        "vllm:inter_token_latency_seconds (old: time_per_output_token_seconds)",
        "inter-token latency",
    ),
    *quantiles(
        "vllm.e2e_latency_seconds", (), "vllm:e2e_request_latency_seconds", "end-to-end latency"
    ),
    *quantiles(
        "vllm.queue_time_seconds", (), "vllm:request_queue_time_seconds", "time in the queue"
    ),
)
