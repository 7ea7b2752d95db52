"""The one table of series keys we store. Keys are stable: dashboards, alerts and the API use them.

A stored series is (key, labels); its canonical string is `key{label="value",...}` with labels
sorted (see series.series_id). Units are in the key's last word (`_pct`, `_bytes`, `_mib`,
`_per_s`, `_seconds`, `_ms`, `_ratio`, `_tokens`); quantile keys end in `.p50`, `.p95`, `.p99`,
`.mean` after the histogram's key. vLLM series carry no label unless listed; when one server
reports several model names, vLLM series are also stored per model with the label `model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# Keys of every target kind start with one of these; a kind's own keys start with `<kind>.`.
COMMON_PREFIXES = ("scrape.", "poll.")


class SeriesKind(StrEnum):
    GAUGE = "gauge"  # stored as read (or computed from one poll)
    RATE = "rate"  # counter change per second between two polls
    RATIO = "ratio"  # ratio of two counters' changes between two polls
    QUANTILE = "quantile"  # from a histogram's change between two polls

    @property
    def derived(self) -> bool:
        """Needs two polls (a previous raw snapshot) to be computed."""
        return self is not SeriesKind.GAUGE


@dataclass(frozen=True, slots=True)
class SeriesSpec:
    key: str
    kind: SeriesKind
    labels: tuple[str, ...]
    source: str
    description: str
    # Labelled series whose every label set is also kept in Target.latest (tiles, overview).
    latest: bool = False

    @property
    def target_kind(self) -> str:
        """The target kind that stores this key ("" for keys every kind stores)."""
        if self.key.startswith(COMMON_PREFIXES):
            return ""
        return self.key.split(".", 1)[0]


# Short names for the table below.
GAUGE, RATE, RATIO = SeriesKind.GAUGE, SeriesKind.RATE, SeriesKind.RATIO
QUANTILE = SeriesKind.QUANTILE


def _q(key: str, labels: tuple[str, ...], source: str, what: str) -> list[SeriesSpec]:
    return [
        SeriesSpec(f"{key}.{q}", QUANTILE, labels, source, f"{what}, {q} between two polls")
        for q in ("p50", "p95", "p99", "mean")
    ]


SERIES: tuple[SeriesSpec, ...] = (
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
    *_q("vllm.ttft_seconds", (), "vllm:time_to_first_token_seconds", "time to first token"),
    *_q(
        "vllm.inter_token_latency_seconds",
        (),
        "vllm:inter_token_latency_seconds (old: time_per_output_token_seconds)",
        "inter-token latency",
    ),
    *_q("vllm.e2e_latency_seconds", (), "vllm:e2e_request_latency_seconds", "end-to-end latency"),
    *_q("vllm.queue_time_seconds", (), "vllm:request_queue_time_seconds", "time in the queue"),
    # --- Ray per node ---
    SeriesSpec(
        "ray.node.cpu_utilization_pct", GAUGE, ("node",), "ray_node_cpu_utilization", "0-100"
    ),
    SeriesSpec("ray.node.cpu_count", GAUGE, ("node",), "ray_node_cpu_count", "CPUs"),
    SeriesSpec("ray.node.memory_used_bytes", GAUGE, ("node",), "ray_node_mem_used", "RAM used"),
    SeriesSpec(
        "ray.node.memory_available_bytes", GAUGE, ("node",), "ray_node_mem_available", "RAM free"
    ),
    SeriesSpec("ray.node.memory_total_bytes", GAUGE, ("node",), "ray_node_mem_total", "RAM"),
    SeriesSpec(
        "ray.node.gpu_utilization_pct",
        GAUGE,
        ("node", "gpu"),
        "ray_node_gpus_utilization",
        "per GPU (GpuIndex), 0-100; -1 (driver failure) is dropped",
    ),
    SeriesSpec(
        "ray.node.gpu_memory_used_mib",
        GAUGE,
        ("node", "gpu"),
        "ray_node_gram_used",
        "GPU memory used, MiB (Ray's help text says bytes)",
    ),
    SeriesSpec(
        "ray.node.gpu_memory_available_mib",
        GAUGE,
        ("node", "gpu"),
        "ray_node_gram_available",
        "GPU memory free, MiB",
    ),
    SeriesSpec(
        "ray.node.resources_used",
        GAUGE,
        ("node", "resource"),
        'ray_resources{State="USED"}',
        "logical resources used, placement-group reservations counted as used",
    ),
    SeriesSpec(
        "ray.node.resources_available",
        GAUGE,
        ("node", "resource"),
        'ray_resources{State="AVAILABLE"}',
        "logical resources free",
    ),
    # --- Ray cluster ---
    SeriesSpec(
        "ray.cluster.resources_used",
        GAUGE,
        ("resource",),
        "sum of nodes",
        "reservations = used",
        latest=True,
    ),
    SeriesSpec(
        "ray.cluster.resources_available",
        GAUGE,
        ("resource",),
        "sum of nodes",
        "free",
        latest=True,
    ),
    SeriesSpec(
        "ray.cluster.resources_reserved",
        GAUGE,
        ("resource",),
        "/api/cluster_status + placement groups",
        "GPU/CPU reserved by created placement groups",
    ),
    SeriesSpec(
        "ray.cluster.resources_in_use",
        GAUGE,
        ("resource",),
        "/api/cluster_status + placement groups",
        "GPU/CPU actually in use (as `ray status`: inside reservations counts only what runs)",
    ),
    SeriesSpec("ray.cluster.nodes_scraped", GAUGE, (), "poll", "exporters with node series"),
    SeriesSpec("ray.cluster.exporters", GAUGE, (), "discovery", "exporters discovered"),
    SeriesSpec("ray.cluster.exporters_failed", GAUGE, (), "poll", "exporters that failed"),
    SeriesSpec("ray.cluster.gpus_reporting", GAUGE, (), "sum of nodes", "GPUs with a reading"),
    SeriesSpec(
        "ray.placement_groups",
        GAUGE,
        ("state",),
        "ray_placement_groups",
        "groups by state",
        latest=True,
    ),
    SeriesSpec(
        "ray.actors",
        GAUGE,
        ("state",),
        'ray_actors (one Source: "gcs"; the executors\' own count is not added)',
        "actors by state",
    ),
    SeriesSpec(
        "ray.tasks",
        GAUGE,
        ("state",),
        "ray_tasks (owner and executor added: each holds a task in different states)",
        "tasks by state (FINISHED and FAILED are totals since the session started)",
    ),
    SeriesSpec(
        "ray.cluster.nodes_expected",
        GAUGE,
        (),
        "linked inventory machines, else the linked plan's hosts (stored by the poller)",
        "nodes the cluster should have",
    ),
    SeriesSpec(
        "ray.cluster.nodes_missing",
        GAUGE,
        (),
        "nodes_expected - nodes_scraped (stored by the poller)",
        "expected nodes that did not answer (a lost node)",
    ),
    # --- Ray Serve ---
    SeriesSpec(
        "ray.serve.http_requests_per_s",
        RATE,
        ("application",),
        "ray_serve_num_http_requests[_total]",
        "HTTP requests/s at the proxies",
    ),
    SeriesSpec(
        "ray.serve.http_errors_per_s",
        RATE,
        ("application",),
        "ray_serve_num_http_requests[_total] status_code >= 400",
        "HTTP errors/s",
    ),
    SeriesSpec(
        "ray.serve.deployment_requests_per_s",
        RATE,
        ("application", "deployment"),
        "ray_serve_deployment_request_counter[_total]",
        "requests/s handled by replicas",
    ),
    *_q(
        "ray.serve.http_latency_ms",
        ("application",),
        "ray_serve_http_request_latency_ms",
        "HTTP latency at the proxy",
    ),
    *_q(
        "ray.serve.processing_latency_ms",
        ("application", "deployment"),
        "ray_serve_deployment_processing_latency_ms",
        "replica processing latency",
    ),
    SeriesSpec(
        "ray.serve.ongoing_http_requests",
        GAUGE,
        (),
        "ray_serve_num_ongoing_http_requests",
        "in flight at the proxies (summed over nodes)",
    ),
    SeriesSpec(
        "ray.serve.replica_processing_queries",
        GAUGE,
        ("application", "deployment"),
        "ray_serve_replica_processing_queries",
        "queries being processed by replicas",
    ),
    SeriesSpec(
        "ray.serve.replicas_healthy",
        GAUGE,
        ("application", "deployment"),
        "ray_serve_deployment_replica_healthy",
        "healthy replicas",
    ),
    SeriesSpec(
        "ray.serve.application_status",
        GAUGE,
        ("application",),
        "ray_serve_application_status",
        "numeric enum, 6 = RUNNING",
    ),
    SeriesSpec(
        "ray.serve.deployment_status",
        GAUGE,
        ("application", "deployment"),
        "ray_serve_deployment_status",
        "numeric enum, 6 = HEALTHY",
    ),
    # --- GPUs (dcgm-exporter, nvidia_gpu_exporter), per GPU or MIG instance ---
    SeriesSpec(
        "gpu.utilization_pct",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_GPU_UTIL (MIG: DCGM_FI_PROF_GR_ENGINE_ACTIVE x 100); "
        "nvidia_smi_utilization_gpu_ratio x 100",
        "0-100; `mig` (GPU_I_ID) only on MIG instances",
        latest=True,
    ),
    SeriesSpec(
        "gpu.memory_used_mib",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_FB_USED; nvidia_smi_memory_used_bytes / 2^20",
        "framebuffer memory used",
        latest=True,
    ),
    SeriesSpec(
        "gpu.memory_total_mib",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_FB_TOTAL or FB_USED + FB_FREE + FB_RESERVED; nvidia_smi_memory_total_bytes",
        "framebuffer memory in all",
        latest=True,
    ),
    SeriesSpec(
        "gpu.memory_used_pct",
        GAUGE,
        ("gpu", "mig"),
        "used / total",
        "memory used, 0-100",
        latest=True,
    ),
    SeriesSpec(
        "gpu.power_w",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_POWER_USAGE; nvidia_smi_power_draw_watts",
        "power draw, W",
        latest=True,
    ),
    SeriesSpec(
        "gpu.power_limit_w",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_POWER_MGMT_LIMIT; nvidia_smi_enforced_power_limit_watts",
        "enforced power limit, W",
    ),
    SeriesSpec(
        "gpu.temperature_c",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_GPU_TEMP; nvidia_smi_temperature_gpu",
        "GPU temperature, degrees C",
        latest=True,
    ),
    SeriesSpec(
        "gpu.sm_clock_mhz",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_SM_CLOCK; nvidia_smi_clocks_current_sm_clock_hz / 1e6",
        "SM clock, MHz",
    ),
    SeriesSpec(
        "gpu.dram_active_pct",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_PROF_DRAM_ACTIVE x 100; nvidia_smi_utilization_memory_ratio x 100",
        "memory interface busy, 0-100",
    ),
    SeriesSpec(
        "gpu.xid_last",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_XID_ERRORS",
        "code of the last XID error, 0 = none (dcgm-exporter only)",
        latest=True,
    ),
    SeriesSpec(
        "gpu.throttle_thermal",
        GAUGE,
        ("gpu", "mig"),
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS / CLOCKS_EVENT_REASONS bits 0x20|0x40; "
        "nvidia_smi_clocks_*_reasons_{sw,hw}_thermal_slowdown",
        "1 while clocks are cut for temperature",
        latest=True,
    ),
    SeriesSpec(
        "gpu.throttle_power",
        GAUGE,
        ("gpu", "mig"),
        "same bitmask, bits 0x4|0x80; nvidia_smi_clocks_*_reasons_{sw_power_cap,"
        "hw_power_brake_slowdown}",
        "1 while clocks are cut for power",
        latest=True,
    ),
    # --- GPUs, per machine (the target) ---
    SeriesSpec("gpu.machine.gpus", GAUGE, (), "per-GPU series", "physical GPUs seen"),
    SeriesSpec(
        "gpu.machine.gpus_idle",
        GAUGE,
        (),
        "utilization",
        "GPUs or MIG instances below the idle line (5 %)",
    ),
    SeriesSpec("gpu.machine.gpus_busy", GAUGE, (), "utilization", "the others"),
    SeriesSpec(
        "gpu.machine.gpus_stuck",
        GAUGE,
        (),
        "memory + utilization",
        "memory nearly full while utilization is idle (a stuck or hung process)",
    ),
    SeriesSpec(
        "gpu.machine.gpus_throttled", GAUGE, (), "throttle reasons", "thermal or power throttled"
    ),
    SeriesSpec("gpu.machine.gpus_xid", GAUGE, (), "DCGM_FI_DEV_XID_ERRORS", "GPUs with an XID"),
    SeriesSpec(
        "gpu.machine.gpus_idle_planned",
        GAUGE,
        (),
        "plan allocation + utilization (stored by the poller)",
        "idle GPUs the linked plan allocates to a vLLM server or Ray node",
    ),
    SeriesSpec("gpu.machine.utilization_pct", GAUGE, (), "per-GPU series", "mean over GPUs, 0-100"),
    SeriesSpec("gpu.machine.memory_used_mib", GAUGE, (), "per-GPU series", "sum over GPUs"),
    SeriesSpec("gpu.machine.memory_total_mib", GAUGE, (), "per-GPU series", "sum over GPUs"),
    SeriesSpec("gpu.machine.power_w", GAUGE, (), "per-GPU series", "sum over GPUs"),
    SeriesSpec("gpu.machine.temperature_max_c", GAUGE, (), "per-GPU series", "hottest GPU"),
)

BY_KEY: dict[str, SeriesSpec] = {spec.key: spec for spec in SERIES}
# Labelled series copied into Target.latest next to every unlabelled one.
LATEST_LABELLED: frozenset[str] = frozenset(s.key for s in SERIES if s.latest)


def for_kind(kind: str) -> tuple[SeriesSpec, ...]:
    """Return the keys a target of `kind` stores: its own and the ones every kind stores."""
    return tuple(s for s in SERIES if s.target_kind in ("", kind))


def markdown_table() -> str:
    """Return the key table as Markdown (for docs)."""
    lines = ["| key | kind | labels | from | meaning |", "|---|---|---|---|---|"]
    for s in SERIES:
        labels = ", ".join(s.labels) or "-"
        lines.append(f"| `{s.key}` | {s.kind} | {labels} | {s.source} | {s.description} |")
    return "\n".join(lines)
