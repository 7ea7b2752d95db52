"""GPU targets and the Machines view: linking to inventory machines, registering from the
inventory, plan allocation, default GPU alerts, and a poll against the simulator."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from monitoring.machines import allocation
from monitoring.machines import overview as machines
from monitoring.models import AlertRule, Target
from monitoring.polling.run import poll
from monitoring.scrape import from_text
from monitoring.services import PollOutcome, gpu_targets_register, poll_record_success
from monitoring.simulator.dcgm_sim import DEMO_GPU_MACHINES, SimDcgm
from planner.engine.result import PlanResult
from tests.inventory.factories import MachineFactory

pytestmark = pytest.mark.django_db


def store(target: Target, text: str) -> None:
    """Store a GPU payload on `target` as a successful poll would."""
    result = from_text(text, "gpu", ts=time.time())
    assert result.ok, result.errors
    poll_record_success(
        target=target,
        ts=timezone.now(),
        outcome=PollOutcome(samples=result.samples, info=result.info),
    )


def sim_text(hostname: str) -> str:
    profile = next(p for p in DEMO_GPU_MACHINES if p.hostname == hostname)
    return SimDcgm(profile).metrics(time.time()).decode()


def test_a_gpu_target_is_linked_to_its_machine_by_the_host_name_it_reports(make_target):
    machine = MachineFactory(hostname="a800-node-2", nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/x")
    store(target, sim_text("a800-node-2"))

    overview = machines.machines_overview()

    row = next(r for r in overview.rows if r.machine == machine)
    assert (row.target, row.link, row.state) == (target, "hostname", "up")
    assert row.reported_gpus == 8
    assert [g.state for g in row.gpus].count("stuck") == 1
    assert row.free == 2


def test_the_short_host_name_matches_a_fully_qualified_one(make_target):
    machine = MachineFactory(hostname="a100-node-1.dc1.example.com", nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/y")
    store(target, sim_text("a100-node-1"))

    row = next(r for r in machines.machines_overview().rows if r.machine == machine)

    assert row.target == target


def test_an_explicit_link_wins_over_the_host_name(make_target):
    named = MachineFactory(hostname="a100-node-1", nics=[])
    chosen = MachineFactory(hostname="the-real-box", gpu_count=4, nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/z", machines=[chosen])
    store(target, sim_text("a100-node-1"))

    rows = {r.hostname: r for r in machines.machines_overview().rows}

    assert (rows["the-real-box"].target, rows["the-real-box"].link) == (target, "explicit")
    assert (rows["a100-node-1"].machine, rows["a100-node-1"].target) == (named, None)


def test_missing_gpus_and_unknown_hosts_are_shown(make_target):
    MachineFactory(hostname="rtx4090-box", gpu_count=2, nics=[])  # the exporter reports one
    lonely = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/w")
    store(lonely, sim_text("a800-node-1"))  # no such machine in this inventory
    box = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/v")
    store(box, sim_text("rtx4090-box"))

    overview = machines.machines_overview()

    rows = {r.hostname: r for r in overview.rows}
    assert rows["rtx4090-box"].missing == 1
    assert rows["a800-node-1"].machine is None
    assert overview.totals["gpus_reported"] == 9
    assert overview.totals["gpus_missing"] == 1


def test_the_plan_allocation_names_the_server_on_each_gpu():
    result = {
        "recommendation": {"candidate_id": "c2", "route": "A"},
        "candidates": [
            {"id": "c1", "hosts": [["x"]], "gpus_per_replica": 8, "nodes_per_replica": 1},
            {
                "id": "c2",
                "hosts": [["A800-Node-1"], ["a800-node-1"]],
                "gpus_per_replica": 4,
                "nodes_per_replica": 1,
            },
        ],
    }
    spread = {
        "recommendation": {"candidate_id": "c", "route": "B"},
        "candidates": [
            {
                "id": "c",
                "hosts": [["a800-node-1", "a800-node-2"]],
                "gpus_per_replica": 4,
                "nodes_per_replica": 2,
            }
        ],
    }

    table = allocation.allocate(
        [("llama", PlanResult.from_dict(result)), ("qwen", PlanResult.from_dict(spread))]
    )

    assert table["a800-node-1"] == {str(i): "llama" for i in range(8)} | {
        "8": "qwen",
        "9": "qwen",
    }
    assert table["a800-node-2"] == {"0": "qwen", "1": "qwen"}


def node_1_plan(author):
    """A plan that gives GPUs 0 and 1 of a800-node-1 to one replica."""
    from planner.models import Plan

    return Plan.objects.create(
        title="llama on node 1",
        author=author,
        spec={},
        engine_input={},
        result={
            "recommendation": {"candidate_id": "c"},
            "candidates": [
                {
                    "id": "c",
                    "hosts": [["a800-node-1"]],
                    "gpus_per_replica": 2,
                    "nodes_per_replica": 1,
                }
            ],
        },
        engine_version="test",
        model_name="Llama",
        route="A",
        tp=2,
        pp=1,
        replicas=1,
        executor_backend="mp",
        pool_kind="dedicated",
    )


def test_gpu_users_come_from_the_linked_plan(make_target, planner):
    plan = node_1_plan(planner)
    MachineFactory(hostname="a800-node-1", nics=[])
    make_target(name="llama-server", kind="vllm", plan=plan)
    gpu = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/u")
    store(gpu, sim_text("a800-node-1"))

    row = next(r for r in machines.machines_overview().rows if r.hostname == "a800-node-1")

    assert [(g.id, g.user, g.user_source) for g in row.gpus[:3]] == [
        ("0", "llama-server", "plan"),
        ("1", "llama-server", "plan"),
        ("2", "", ""),
    ]
    assert [s.name for s in row.servers] == ["llama-server"]


def test_idle_gpus_the_plan_expects_busy_are_counted():
    cells = machines.cells_from(
        {
            'gpu.utilization_pct{gpu="0"}': 0.0,
            'gpu.utilization_pct{gpu="1"}': 80.0,
            'gpu.utilization_pct{gpu="2"}': 0.0,
        },
        {},
    )

    assert machines.idle_planned(cells, {"0": "a", "1": "a"}) == 1


def test_a_gpu_poll_counts_the_idle_gpus_of_its_explicitly_linked_machine(make_target, planner):
    machine = MachineFactory(hostname="a800-node-1", nics=[])
    make_target(name="llama-server", kind="vllm", plan=node_1_plan(planner))
    # The exporter calls itself something else: the explicit link says which machine it is.
    gpu = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/p", machines=[machine])
    result = from_text(sim_text("a800-node-1"), "gpu", ts=time.time())
    info = {**result.info, "hostname": "dgx-renamed"}
    for gid in ("0", "1"):  # GPU 0 idle, GPU 1 busy
        info["readings"][gid].update(utilization_pct=0.0 if gid == "0" else 90.0)

    extras = machines.poll_extras(gpu, result.samples, info)
    unlinked = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/q")
    machines.forget_cached()

    assert [(s.key, s.value) for s in extras] == [("gpu.machine.gpus_idle_planned", 1.0)]
    assert machines.poll_extras(unlinked, result.samples, info)[0].value == 0  # not node 1


def test_one_action_registers_a_gpu_target_per_machine_with_a_metrics_url():
    a = MachineFactory(hostname="n1", gpu_metrics_url="http://127.0.0.1:9400", nics=[])
    MachineFactory(hostname="n2", nics=[])  # no exporter: skipped
    bad = MachineFactory(hostname="n3", gpu_metrics_url="http://169.254.169.254/", nics=[])

    first = gpu_targets_register()
    again = gpu_targets_register()

    assert first.created == ["gpu-n1"]
    assert [h for h, _ in first.refused] == ["n3"]
    assert "base_url" in first.refused[0][1]
    assert again.created == []
    assert again.unchanged == ["gpu-n1"]
    target = Target.objects.get(name="gpu-n1")
    assert (target.kind, list(target.machines.all())) == ("gpu", [a])
    a.gpu_metrics_url = "http://127.0.0.1:9835"
    a.save()
    assert gpu_targets_register().updated == ["gpu-n1"]
    assert not Target.objects.filter(machines=bad).exists()  # refused: nothing half-saved


def test_gpu_targets_get_the_gpu_alerts(make_target):
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/t")

    rules = {r.series: r for r in AlertRule.objects.filter(target=target)}

    assert rules["gpu.memory_used_pct"].threshold == 95
    assert rules["gpu.temperature_c"].threshold == 85
    assert (rules["gpu.xid_last"].threshold, rules["gpu.xid_last"].duration_s) == (0, 0)
    assert "gpu.machine.gpus_idle_planned" in rules
    assert "gpu.machine.gpus_stuck" in rules


@pytest.mark.enable_socket
def test_a_poll_of_the_simulated_exporter_stores_the_gpus_and_opens_the_stuck_alerts(
    make_target,
):
    from monitoring.alerts.evaluate import alerts_evaluate
    from monitoring.models import AlertEvent
    from monitoring.simulator import Simulator

    MachineFactory(hostname="a800-node-2", nics=[])
    with Simulator(port=0, vllm_count=0, ray=False) as sim:
        url = next(t.base_url for t in sim.targets() if t.name == "a800-node-2")
        target = make_target(kind="gpu", base_url=url)
        AlertRule.objects.filter(target=target).update(duration_s=0)
        report = poll(
            target,
            on_stored=lambda r: alerts_evaluate(target=target, values=r.values, now=r.ts),
        )

    assert report.ok, report.error
    target.refresh_from_db()
    assert target.latest["gpu.machine.gpus"] == 8
    assert target.latest['gpu.memory_used_pct{gpu="4"}'] > 95
    assert target.latest["gpu.machine.gpus_idle_planned"] == 0
    opened = set(AlertEvent.objects.filter(target=target).values_list("rule__series", flat=True))
    assert {"gpu.memory_used_pct", "gpu.machine.gpus_stuck"} <= opened
    state = machines.gpu_state(target)
    assert state["machine"]["hostname"] == "a800-node-2"
    assert [g["state"] for g in state["gpus"]].count("stuck") == 1


def test_the_machines_page_and_its_grid_render(make_target, viewer_client):
    MachineFactory(hostname="a800-node-1", nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/s")
    store(target, sim_text("a800-node-1"))

    page = viewer_client.get(reverse("monitoring:machines"))
    grid = viewer_client.get(reverse("monitoring:machines-grid"))
    detail = viewer_client.get(target.get_absolute_url())
    overview = viewer_client.get(reverse("monitoring:overview"))

    assert page.status_code == grid.status_code == detail.status_code == 200
    html = grid.content.decode()
    assert html.count('class="gpu-cell ') == 8
    assert 'data-machine="a800-node-1"' in html
    assert "chart-gpu-util-history" in detail.content.decode()
    assert overview.context["fleet"].totals["gpus"] == 8


def test_only_planners_register_gpu_targets(viewer_client, planner_client):
    url = reverse("monitoring:machines-register")

    assert viewer_client.post(url).status_code == 403
    assert planner_client.post(url).status_code == 302


def test_machines_view_takes_a_fixed_number_of_queries(
    make_target, viewer_client, django_assert_max_num_queries
):
    for i in range(6):
        MachineFactory(hostname=f"a800-node-{i}", nics=[])
        target = make_target(kind="gpu", base_url=f"http://127.0.0.1:9/dcgm/{i}")
        store(target, sim_text("a800-node-1").replace("a800-node-1", f"a800-node-{i}"))
    viewer_client.get(reverse("monitoring:machines-grid"))

    with django_assert_max_num_queries(12):
        viewer_client.get(reverse("monitoring:machines-grid"))


def test_a_down_gpu_target_shows_its_error_summary_instead_of_stale_gpus(
    make_target, viewer_client
):
    MachineFactory(hostname="a800-node-1", nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/r")
    store(target, sim_text("a800-node-1"))
    Target.objects.filter(pk=target.pk).update(
        last_status="error",
        last_error_kind="connect",
        last_error="[Errno 111] Connection refused by 10.0.0.7:9400",
        last_poll_at=timezone.now() + timedelta(seconds=1),
    )

    row = machines.machines_overview().rows[0]
    html = viewer_client.get(reverse("monitoring:machines-grid")).content.decode()

    assert (row.state, row.gpus) == ("down", [])
    # Viewers read the summary; the recorded diagnostic is for admins (target page).
    assert "Connection refused" not in html
    assert "No metrics could be read from this address" in html


def test_the_gpu_grid_escapes_what_the_exporter_says():
    from monitoring.templatetags.monitoring_tags import gpu_grid

    cell = machines.GpuCell(
        id='0"><b>',
        values={"utilization_pct": 42.0, "memory_used_mib": 2048.0, "xid_last": 79.0},
        user="ns/<script>alert(1)</script>",
        user_source="exporter",
    )

    html = gpu_grid([cell])

    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert 'data-gpu="0&quot;&gt;&lt;b&gt;"' in html
    assert 'data-util="42"' in html
    assert "XID 79" in html
    assert "2.0 / – GiB" in html


def test_gpu_utilisation_is_decision_evidence_for_the_server_on_those_machines(make_target):
    from monitoring.reality.evidence import measure_window

    machine = MachineFactory(hostname="a100-node-1", nics=[])
    server = make_target(kind="vllm", machines=[machine])
    gpu = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/e", machines=[machine])
    start = timezone.now() - timedelta(minutes=5)
    store(gpu, sim_text("a100-node-1"))
    expected = Target.objects.get(pk=gpu.pk).latest["gpu.machine.utilization_pct"]

    measured = {m.kind: m for m in measure_window(server, start, timezone.now())}

    assert measured["gpu_utilization"].unit == "%"
    assert measured["gpu_utilization"].value == pytest.approx(expected, abs=0.01)
    assert gpu.name in measured["gpu_utilization"].note
    assert "gpu_utilization" in {m.kind for m in measure_window(gpu, start, timezone.now())}


def test_the_allocation_follows_the_deployed_layout_not_a_pinned_one_nor_nothing_fits():
    deployed = {"id": "rec", "hosts": [["h1"]], "gpus_per_replica": 2, "nodes_per_replica": 1}
    pinned = {"id": "pin", "hosts": [["h2"]], "gpus_per_replica": 8, "nodes_per_replica": 1}
    with_pin = {
        "recommendation": {"candidate_id": "rec", "route": "single"},
        "candidates": [deployed],
        "pinned": pinned,
    }
    nothing = {"recommendation": {"candidate_id": "rec", "route": "none"}, "candidates": [deployed]}

    table = allocation.allocate(
        [("pinned-plan", PlanResult.from_dict(with_pin)), ("none", PlanResult.from_dict(nothing))]
    )

    assert table == {"h1": {"0": "pinned-plan", "1": "pinned-plan"}}


def test_the_view_reads_the_readings_each_poll_keeps_the_same_as_the_latest_values(make_target):
    MachineFactory(hostname="a800-node-2", nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/k")
    store(target, sim_text("a800-node-2"))
    target = Target.objects.get(pk=target.pk)
    facts = target.info["gpus"]

    from_readings = machines.gpu_cells(target)
    from_latest = machines.cells_from(target.latest, facts)

    shown = ("utilization_pct", "memory_used_mib", "memory_total_mib", "temperature_c")
    assert [(c.id, c.state) for c in from_readings] == [(c.id, c.state) for c in from_latest]
    for a, b in zip(from_readings, from_latest, strict=True):
        assert [a.get(n) for n in shown] == pytest.approx([b.get(n) for n in shown], abs=0.01)
        assert (a.throttled, a.xid_last) == (b.throttled, b.xid_last)


def test_a_target_polled_before_readings_were_kept_still_shows_its_gpus(make_target):
    MachineFactory(hostname="a800-node-1", nics=[])
    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/dcgm/o")
    store(target, sim_text("a800-node-1"))
    info = Target.objects.get(pk=target.pk).info
    del info["readings"]
    Target.objects.filter(pk=target.pk).update(info=info)

    row = machines.machines_overview().rows[0]

    assert len(row.gpus) == 8
    assert row.free == 2


def test_the_machines_page_shows_every_machine_with_its_gpu_cells(viewer_client, make_target):
    MachineFactory(hostname=DEMO_GPU_MACHINES[0].hostname, nics=[])
    target = make_target(name="gpu-node-1", kind="gpu")
    store(target, sim_text(DEMO_GPU_MACHINES[0].hostname))

    page = viewer_client.get(reverse("monitoring:machines"))

    assert page.status_code == 200
    html = page.content.decode()
    # The machine cards, not the fleet overview (the rooms move once rendered the overview here).
    assert f'data-machine="{DEMO_GPU_MACHINES[0].hostname}"' in html
    assert 'class="gpu-cell' in html
