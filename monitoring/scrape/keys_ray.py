"""The keys of a Ray cluster: per node, cluster-wide and Ray Serve."""

from __future__ import annotations

from monitoring.scrape.series_spec import GAUGE, RATE, SeriesSpec, quantiles

RAY_SERIES: tuple[SeriesSpec, ...] = (
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
    *quantiles(
        "ray.serve.http_latency_ms",
        ("application",),
        "ray_serve_http_request_latency_ms",
        "HTTP latency at the proxy",
    ),
    *quantiles(
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
)
