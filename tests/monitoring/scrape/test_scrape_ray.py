"""Ray extraction on the recorded Ray 2.60 head, plus the dashboard JSON shapes."""

from __future__ import annotations

import json

import pytest

from monitoring.scrape import from_text, ray, ray_dashboard
from monitoring.scrape.errors import SourceError

from .conftest import fixture_text


def values(result) -> dict[str, float]:
    return {s.series_id: s.value for s in result.samples}


HEAD = 'node="127.0.0.1:48080"'


def head(n: int = 1) -> str:
    return fixture_text("ray", f"head_exporter_metrics_{n}.txt")


def test_real_head_node_series_carry_our_instance_label():
    got = values(from_text(head(), "ray", ts=0, instance="127.0.0.1:48080"))

    assert got[f"ray.node.cpu_count{{{HEAD}}}"] == 2
    assert 0 <= got[f"ray.node.cpu_utilization_pct{{{HEAD}}}"] <= 100
    assert (
        got[f"ray.node.memory_total_bytes{{{HEAD}}}"] > got[f"ray.node.memory_used_bytes{{{HEAD}}}"]
    )


def test_real_head_resources_count_reservations_as_used():
    got = values(from_text(head(), "ray", ts=0, instance="127.0.0.1:48080"))

    # The recorder reserved 2 of 4 fake GPUs in a placement group and ran nothing on them.
    assert got[f'ray.node.resources_used{{{HEAD},resource="GPU"}}'] == 2
    assert got[f'ray.node.resources_available{{{HEAD},resource="GPU"}}'] == 2
    assert got['ray.cluster.resources_used{resource="GPU"}'] == 2


def test_real_head_placement_groups_and_actors_counted_once():
    got = values(from_text(head(), "ray", ts=0))

    assert got['ray.placement_groups{state="CREATED"}'] == 1
    assert got['ray.placement_groups{state="PENDING"}'] == 1
    # Each actor appears under Source="gcs" and Source="executor": only gcs is counted.
    assert got['ray.actors{state="ALIVE"}'] == 4
    assert got['ray.actors{state="DEAD"}'] == 1
    assert got['ray.actors{state="PENDING_CREATION"}'] == 1
    assert 'ray.actors{state="ALIVE_IDLE"}' not in got


def test_real_head_has_no_gpu_series_with_fake_gpus_which_is_no_data():
    got = values(from_text(head(), "ray", ts=0))

    assert not any(key.startswith("ray.node.gpu_") for key in got)


def test_session_name_is_the_epoch():
    result = from_text(head(), "ray", ts=0)

    assert result.raw is not None
    assert result.raw.epoch.startswith("session_2026-11-30")


_LABELS = 'SessionName="s1",WorkerId="{w}",application="app",method="GET",route="/"'
SERVE_OLD = (
    "# HELP ray_serve_num_http_requests The number of HTTP requests processed.\n"
    "# TYPE ray_serve_num_http_requests counter\n"
    + "".join(
        f'ray_serve_num_http_requests{{{{{_LABELS.format(w=w)},status_code="{code}"}}}} {{{v}}}\n'
        for w, code, v in (("a", "200", "ok"), ("b", "200", "ok"), ("a", "500", "err"))
    )
)
SERVE_NEW = SERVE_OLD.replace("ray_serve_num_http_requests", "ray_serve_num_http_requests_total")
SERVE_OPENMETRICS = SERVE_OLD.replace(
    "ray_serve_num_http_requests{", "ray_serve_num_http_requests_total{"
)


@pytest.mark.parametrize(
    "template",
    [SERVE_OLD, SERVE_NEW, SERVE_OPENMETRICS],
    ids=["pre-2.11", "with-_total", "openmetrics-type-line"],
)
def test_serve_counters_with_and_without_total_and_worker_ids_summed(template):
    first = from_text(template.format(ok=10, err=1), "ray", ts=0)
    second = from_text(template.format(ok=25, err=3), "ray", ts=10, previous=first.raw)
    got = values(second)

    assert got['ray.serve.http_requests_per_s{application="app"}'] == pytest.approx(3.2)
    assert got['ray.serve.http_errors_per_s{application="app"}'] == pytest.approx(0.2)


def test_new_session_name_resets_serve_rates():
    first = from_text(SERVE_NEW.format(ok=10, err=1), "ray", ts=0)
    restarted = SERVE_NEW.format(ok=50, err=1).replace('"s1"', '"s2"')

    second = from_text(restarted, "ray", ts=10, previous=first.raw)

    assert not any(s.key.endswith("_per_s") for s in second.samples)


GPU = """# TYPE ray_node_gpus_utilization gauge
ray_node_gpus_utilization{{GpuDeviceName="NVIDIA H100",GpuIndex="0",ip="10.0.0.5"}} {u0}
ray_node_gpus_utilization{{GpuDeviceName="NVIDIA H100",GpuIndex="1",ip="10.0.0.5"}} {u1}
# TYPE ray_node_gram_used gauge
ray_node_gram_used{{GpuDeviceName="NVIDIA H100",GpuIndex="0",ip="10.0.0.5"}} 70000
ray_node_gram_used{{GpuDeviceName="NVIDIA H100",GpuIndex="1",ip="10.0.0.5"}} 12
"""


def test_gpu_series_per_gpu_index_and_minus_one_is_dropped():
    result = from_text(GPU.format(u0=87.5, u1=-1), "ray", ts=0, instance="n1:8080")
    got = values(result)

    assert got['ray.node.gpu_utilization_pct{gpu="0",node="n1:8080"}'] == 87.5
    assert 'ray.node.gpu_utilization_pct{gpu="1",node="n1:8080"}' not in got
    assert got['ray.node.gpu_memory_used_mib{gpu="0",node="n1:8080"}'] == 70000
    assert any("-1" in w for w in result.warnings)
    assert result.info["gpus"] == {"n1:8080": {"0": "NVIDIA H100", "1": "NVIDIA H100"}}


def test_merge_sums_cluster_resources_across_nodes():
    a = ray.extract(head(), 0, node="a:1")
    b = ray.extract(head(), 0, node="b:2")

    got = {s.series_id: s.value for s in ray.merge([a, b], 0).gauges}

    assert got['ray.cluster.resources_used{resource="GPU"}'] == 4
    assert got["ray.cluster.nodes_scraped"] == 2
    assert got['ray.node.resources_used{node="b:2",resource="GPU"}'] == 2


def test_dashboard_sd_lists_every_exporter():
    body = fixture_text("ray", "dashboard_prometheus_sd.json")

    assert ray_dashboard.exporters_from_sd(body) == [
        "127.0.0.1:48080",
        "127.0.0.1:44217",
        "127.0.0.1:44227",
    ]


def test_dashboard_nodes_summary_gives_each_metrics_export_port():
    (node,) = ray_dashboard.nodes_from_summary(fixture_text("ray", "dashboard_nodes_summary.json"))

    assert node.exporter == "127.0.0.1:48080"
    assert node.is_head
    assert node.state == "ALIVE"


def test_dashboard_placement_groups_give_the_pending_reason():
    groups = ray_dashboard.placement_groups(fixture_text("ray", "dashboard_placement_groups.json"))
    pending = [g for g in groups if g.state == "PENDING"]

    assert [(g.name, g.scheduling_state, g.bundles) for g in pending] == [
        ("too-big", "INFEASIBLE", ({"GPU": 8.0},))
    ]


def test_cluster_status_separates_reserved_from_actually_used():
    groups = ray_dashboard.placement_groups(fixture_text("ray", "dashboard_placement_groups.json"))

    samples = ray_dashboard.reservations(
        fixture_text("ray", "dashboard_cluster_status.json"), groups
    )
    got = {s.series_id: s.value for s in samples}

    assert got['ray.cluster.resources_reserved{resource="GPU"}'] == 2
    assert got['ray.cluster.resources_in_use{resource="GPU"}'] == 0


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("<html>", id="not-json"),
        pytest.param('{"result": false, "msg": "boom", "data": {}}', id="result-false"),
        pytest.param("[1, 2]", id="not-wrapped"),
    ],
)
def test_bad_dashboard_json_is_a_source_error(body):
    with pytest.raises(SourceError):
        ray_dashboard.nodes_from_summary(body)


@pytest.mark.parametrize(
    ("reader", "data"),
    [
        pytest.param(
            ray_dashboard.nodes_from_summary, {"summary": ["hunter2"]}, id="node-not-an-object"
        ),
        pytest.param(ray_dashboard.nodes_from_summary, {"summary": 5}, id="summary-not-a-list"),
        pytest.param(
            ray_dashboard.nodes_from_summary,
            {"summary": [{"raylet": {"metricsExportPort": "hunter2"}}]},
            id="port-not-a-number",
        ),
        pytest.param(
            ray_dashboard.placement_groups,
            {"result": {"result": [{"bundles": [{"unit_resources": {"GPU": "hunter2"}}]}]}},
            id="resources-not-numbers",
        ),
        pytest.param(
            ray_dashboard.pending_strategies,
            {"clusterStatus": {"loadMetricsReport": {"pgDemand": [[{"bundles": [[{}, "x"]]}]]}}},
            id="bundle-count-not-a-number",
        ),
    ],
)
def test_dashboard_json_of_another_shape_is_a_source_error_that_quotes_nothing(reader, data):
    with pytest.raises(SourceError) as info:
        reader(json.dumps({"result": True, "data": data}))

    assert "hunter2" not in str(info.value)


def test_tasks_by_state_add_owner_and_executor_counts():
    result = from_text(fixture_text("ray", "head_exporter_metrics_1.txt"), "ray", ts=0)
    tasks = {dict(s.labels)["state"]: s.value for s in result.samples if s.key == "ray.tasks"}

    assert tasks["FINISHED"] == 60  # the owner's count
    assert tasks["PENDING_NODE_ASSIGNMENT"] == 1
    assert tasks["RUNNING"] == 0  # the executor's


def test_pending_group_strategy_comes_from_the_cluster_status_demand():

    groups = [
        g.as_dict()
        for g in ray_dashboard.placement_groups(
            fixture_text("ray", "dashboard_placement_groups.json")
        )
        if g.state == "PENDING"
    ]
    assert groups[0]["strategy"] == ""  # Ray 2.60's placement-group API leaves it blank

    filled = ray_dashboard.with_strategies(
        groups,
        ray_dashboard.pending_strategies(fixture_text("ray", "dashboard_cluster_status.json")),
    )

    assert filled[0]["strategy"] == "STRICT_PACK"


def cluster_status(pg_demand: list) -> str:
    return json.dumps(
        {"result": True, "data": {"clusterStatus": {"loadMetricsReport": {"pgDemand": pg_demand}}}}
    )


def test_identical_pending_groups_each_get_the_strategy_of_their_demand():
    groups = [{"bundles": [{"GPU": 4.0}, {"GPU": 4.0}], "strategy": ""} for _ in range(3)]
    demand = {"bundles": [[{"GPU": 4.0}, 2]], "strategy": "PACK"}

    filled = ray_dashboard.with_strategies(
        groups, ray_dashboard.pending_strategies(cluster_status([[demand, 2]]))
    )

    assert [g["strategy"] for g in filled] == ["PACK", "PACK", ""]  # the demand counts two


def test_a_huge_bundle_count_from_the_dashboard_is_counted_not_expanded():
    demand = {"bundles": [[{"GPU": 1.0}, 10**15]], "strategy": "SPREAD"}

    (pending,) = ray_dashboard.pending_strategies(cluster_status([[demand, 10**15]]))

    assert pending.shape == (((("GPU", 1.0),), 10**15),)
    assert pending.groups == 10**15
