"""Plan vs reality, like for like: an S1 plan with two simulated replicas, per replica and plan."""

from __future__ import annotations

import pytest

from monitoring.models import PlanScope, Target
from monitoring.reality.comparison import Scope, deviation_pct, plan_comparison
from monitoring.reality.observation import observe
from monitoring.selectors import resolve_range
from monitoring.simulator.vllm_sim import VllmProfile
from planner.selectors.plan_values import plan_values, predict_at
from planner.services import plan_create
from tests.monitoring.simulated import feed_simulated
from tests.planner.conftest import S1_SPEC
from tests.planner.fleet import build_demo_fleet

pytestmark = pytest.mark.django_db

LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


@pytest.fixture
def s1_plan(planner):
    build_demo_fleet()
    return plan_create(spec={**S1_SPEC}, actor=planner)


def reality_section(client, page_url: str) -> bytes:
    """Return the plan vs reality section a planner page loads after it has arrived."""
    import re

    page = client.get(page_url)
    assert page.status_code == 200, page_url
    url = re.search(rb'data-reality-url="([^"]+)"', page.content).group(1).decode()
    section = client.get(url)
    assert section.status_code == 200, url
    return section.content


def _replica(name: str, *, blocks: int, model: str = LLAMA_70B, seed: int = 1) -> VllmProfile:
    return VllmProfile(
        name=name,
        model=model,
        base_rps=3.0,
        max_num_seqs=256,
        num_gpu_blocks=blocks,
        mean_prompt_tokens=1024,
        mean_output_tokens=256,
        itl_s=0.012,
        seed=seed,
    )


@pytest.fixture
def two_replicas(make_target, s1_plan):
    planned = plan_values(s1_plan).replica.kv_blocks
    a = make_target(name="s1-replica-a", plan=s1_plan)
    b = make_target(name="s1-replica-b", plan=s1_plan)
    feed_simulated(a, _replica("a", blocks=planned, seed=1))
    feed_simulated(b, _replica("b", blocks=int(planned * 0.8), seed=2))
    return a, b


def _rows(comparison):
    return {r.quantity: r for r in comparison.rows}


def test_deviation_is_signed_in_percent_of_the_plan():
    assert deviation_pct(100.0, 80.0) == -20.0
    assert deviation_pct(100.0, 125.0) == 25.0
    assert deviation_pct(0.0, 1.0) is None
    assert deviation_pct(None, 1.0) is None


def test_one_replica_is_compared_with_one_replica_of_the_plan(two_replicas, s1_plan):
    a, b = two_replicas
    start, end = resolve_range("1h")
    values = plan_values(s1_plan)

    replica_b = plan_comparison(b, start=start, end=end)

    assert replica_b.scope == Scope.REPLICA
    assert replica_b.targets == ("s1-replica-b",)
    rows = _rows(replica_b)
    # KV blocks: one replica's planned blocks per GPU, not the whole plan's capacity.
    assert rows["kv_blocks"].planned == values.replica.kv_blocks
    assert rows["kv_blocks"].observed == int(values.replica.kv_blocks * 0.8)
    assert rows["kv_blocks"].deviation_pct == pytest.approx(-20.0, abs=0.1)
    assert rows["kv_blocks"].within_tolerance is False
    assert rows["kv_blocks"].unit == "blocks"
    replica_a = _rows(plan_comparison(a, start=start, end=end))
    assert replica_a["kv_blocks"].deviation_pct == 0.0
    assert replica_a["kv_blocks"].within_tolerance is True
    # Throughput is predicted at the concurrency the server ran, not at the plan's.
    running = rows["running_requests"].observed
    assert running is not None
    assert running != pytest.approx(values.replica.concurrency)
    # ... and at the request lengths it saw (the simulated lengths drift with the clock).
    seen = observe(b, start, end)
    at_observed = predict_at(
        s1_plan,
        concurrency_per_replica=seen.concurrency,
        avg_input_tokens=seen.avg_input_tokens,
        avg_output_tokens=seen.avg_output_tokens,
    )
    at_planned = predict_at(s1_plan, concurrency_per_replica=values.replica.concurrency)
    assert rows["output_throughput"].planned == pytest.approx(at_observed.output_tok_s, rel=0.05)
    assert rows["output_throughput"].planned != pytest.approx(at_planned.output_tok_s, rel=0.05)
    assert rows["output_throughput"].unit == "tok/s"
    assert rows["ttft_p95"].unit == rows["itl_p95"].unit == "ms"
    assert rows["itl_p95"].observed > 0
    assert not [w for w in replica_b.warnings if w.code == "replica_count_mismatch"]


def test_the_plan_scope_sums_the_linked_replicas(two_replicas, s1_plan):
    a, b = two_replicas
    start, end = resolve_range("1h")
    single = [_rows(plan_comparison(t, start=start, end=end)) for t in (a, b)]

    whole = plan_comparison(a, start=start, end=end, scope="plan")

    assert whole.scope == Scope.PLAN
    assert whole.targets == ("s1-replica-a", "s1-replica-b")
    rows = _rows(whole)
    values = plan_values(s1_plan)
    assert rows["replicas"].planned == values.replicas
    assert rows["replicas"].observed == 2  # the linked targets
    assert rows["kv_capacity_tokens"].planned == values.replica.kv_tokens * values.replicas
    assert rows["output_throughput"].observed == pytest.approx(
        sum(r["output_throughput"].observed for r in single), rel=0.01
    )
    assert rows["output_throughput"].planned == pytest.approx(
        sum(r["output_throughput"].planned for r in single), rel=0.01
    )
    assert rows["ttft_p95"].observed == max(r["ttft_p95"].observed for r in single)
    assert "kv_blocks" not in rows


def test_a_missing_replica_is_reported(make_target, s1_plan):
    target = make_target(name="lonely", plan=s1_plan)
    feed_simulated(target, _replica("lonely", blocks=plan_values(s1_plan).replica.kv_blocks))
    start, end = resolve_range("1h")

    comparison = plan_comparison(target, start=start, end=end)

    codes = [w.code for w in comparison.warnings]
    assert "replica_count_mismatch" in codes


def test_a_target_serving_another_model_is_flagged(make_target, s1_plan):
    target = make_target(name="wrong-model", plan=s1_plan)
    feed_simulated(target, _replica("q", blocks=5000, model="Qwen/Qwen2.5-32B-Instruct"))
    start, end = resolve_range("1h")

    comparison = plan_comparison(target, start=start, end=end)

    mismatch = [w for w in comparison.warnings if w.code == "model_mismatch"]
    assert len(mismatch) == 1
    assert "Qwen/Qwen2.5-32B-Instruct" in mismatch[0].message
    assert "Llama-3.1-70B-Instruct" in mismatch[0].message


def test_the_right_model_under_its_repo_path_is_not_flagged(two_replicas):
    a, _ = two_replicas
    start, end = resolve_range("1h")
    codes = [w.code for w in plan_comparison(a, start=start, end=end).warnings]
    assert "model_mismatch" not in codes
    assert "max_model_len_mismatch" not in codes


def test_a_whole_plan_target_is_always_the_plan_scope(make_target, s1_plan):
    target = make_target(name="pool", plan=s1_plan, plan_scope=PlanScope.PLAN)
    feed_simulated(target, _replica("pool", blocks=plan_values(s1_plan).replica.kv_blocks))
    start, end = resolve_range("1h")

    comparison = plan_comparison(target, start=start, end=end, scope="replica")

    assert comparison.scope == Scope.PLAN
    rows = _rows(comparison)
    assert rows["replicas"].observed is None  # one address does not say what it balances over
    assert rows["replicas"].within_tolerance is None
    assert not [w for w in comparison.warnings if w.code == "replica_count_mismatch"]


def test_the_slo_rows_come_from_the_decision(make_target, s1_plan, planner):
    from planner.decisions.services import decision_create

    decision = decision_create(
        actor=planner,
        title="llama on a800",
        evidence={"ttft_p95": {"threshold": 800}, "itl_p95": {"threshold": 1}},
    )
    target = make_target(name="slo", plan=s1_plan, decision=decision)
    feed_simulated(target, _replica("slo", blocks=plan_values(s1_plan).replica.kv_blocks))
    start, end = resolve_range("1h")

    rows = _rows(plan_comparison(target, start=start, end=end))

    assert rows["ttft_p95_slo"].planned == 800.0
    assert rows["itl_p95_slo"].planned == 1.0
    assert rows["itl_p95_slo"].within_tolerance is False  # a 1 ms ITL threshold is broken
    Target.objects.filter(pk=target.pk).update(decision=None)


def test_a_model_mismatch_shows_on_the_target_plan_and_decision_pages(
    make_target, s1_plan, planner, viewer_client
):
    from planner.decisions.services import decision_create

    decision = decision_create(actor=planner, title="llama on a800", plan=s1_plan)
    target = make_target(name="wrong-model", plan=s1_plan, decision=decision)
    feed_simulated(target, _replica("q", blocks=5000, model="Qwen/Qwen2.5-32B-Instruct"))
    served = b"wrong-model serves Qwen/Qwen2.5-32B-Instruct"

    target_page = viewer_client.get(target.get_absolute_url())
    assert target_page.status_code == 200
    for url, html in (
        (target.get_absolute_url(), target_page.content),
        (s1_plan.get_absolute_url(), reality_section(viewer_client, s1_plan.get_absolute_url())),
        (decision.get_absolute_url(), reality_section(viewer_client, decision.get_absolute_url())),
    ):
        assert b'data-code="model_mismatch"' in html, url
        assert served in html, url


def test_the_target_page_draws_like_for_like_lines(two_replicas, planner, viewer_client):
    from planner.decisions.services import decision_create

    a, _ = two_replicas
    decision = decision_create(
        actor=planner, title="slo", evidence={"ttft_p95": {"threshold": 800}}
    )
    Target.objects.filter(pk=a.pk).update(decision=decision)

    page = viewer_client.get(a.get_absolute_url())

    charts = {c.id: c for c in page.context["charts"]}
    kv = charts["chart-kv"].lines
    assert [line.y for line in kv] == [100.0]  # this replica has exactly the planned blocks
    ttft = {line.kind: line.y for line in charts["chart-ttft"].lines}
    assert ttft["slo"] == 800.0
    assert ttft["plan"] > 0
    assert {line.kind for line in charts["chart-itl"].lines} == {"plan"}


@pytest.mark.parametrize(
    ("served", "matches"),
    [
        pytest.param(("meta-llama/Llama-3.1-70B-Instruct",), True, id="hf-repo"),
        pytest.param(("/models/Llama-3.1-70B-Instruct",), True, id="local-path"),
        pytest.param(("RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w8a8",), True, id="quant"),
        pytest.param(("llama70b", "/data/llama-3.1-70b"), True, id="alias-with-root"),
        pytest.param(("Qwen/Qwen2.5-32B-Instruct",), False, id="other-model"),
        pytest.param(("meta-llama/Llama-3.1-8B-Instruct",), False, id="other-size"),
        pytest.param((), None, id="nothing-served"),
    ],
)
def test_served_model_names_are_matched_without_paths_or_case(s1_plan, served, matches):
    from monitoring.reality.server_checks import model_matches

    assert model_matches(served, plan_values(s1_plan)) is matches


def test_a_different_context_length_is_flagged(make_target, s1_plan):
    target = make_target(name="short", plan=s1_plan)
    profile = _replica("short", blocks=plan_values(s1_plan).replica.kv_blocks)
    profile.max_model_len = 4096
    feed_simulated(target, profile)
    start, end = resolve_range("1h")

    warnings = plan_comparison(target, start=start, end=end).warnings

    mismatch = [w for w in warnings if w.code == "max_model_len_mismatch"]
    assert len(mismatch) == 1
    assert "4096" in mismatch[0].message
    assert str(plan_values(s1_plan).max_model_len) in mismatch[0].message


def test_a_ray_target_linked_to_a_plan_explains_what_to_link(make_target, s1_plan, viewer_api):
    from monitoring.reality.comparison import NotComparable

    target = make_target(name="pool", kind="ray", base_url="http://127.0.0.1:9/ray", plan=s1_plan)
    start, end = resolve_range("1h")

    with pytest.raises(NotComparable):
        plan_comparison(target, start=start, end=end)
    answer = viewer_api.get(f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/")
    assert answer.status_code == 409
    assert "vLLM" in answer.json()["detail"]


def test_data_parallel_engines_count_as_replicas(make_target, s1_plan):
    from monitoring.scrape import from_text
    from monitoring.simulator.vllm_sim import SimVllm

    # One server with --data-parallel-size 2: cache_config_info once per engine.
    text = SimVllm(_replica("dp", blocks=1000)).metrics(1e9).decode()
    line = next(x for x in text.splitlines() if x.startswith("vllm:cache_config_info{"))
    text = text.replace(line, line + "\n" + line.replace('engine="0"', 'engine="1"'))
    assert from_text(text, "vllm").info["engines"] == 2
    replica = make_target(name="dp-as-replica", plan=s1_plan)
    whole = make_target(name="dp-as-plan", plan=s1_plan, plan_scope=PlanScope.PLAN)
    for target in (replica, whole):
        Target.objects.filter(pk=target.pk).update(
            info={"engines": 2, "cache_config": {"num_gpu_blocks": "1000"}}
        )
        target.refresh_from_db()
    start, end = resolve_range("1h")

    as_replica = plan_comparison(replica, start=start, end=end)
    as_plan = plan_comparison(whole, start=start, end=end)

    assert "data_parallel_engines" in {w.code for w in as_replica.warnings}
    rows = _rows(as_plan)
    assert rows["replicas"].observed == 2
    assert rows["replicas"].within_tolerance is True
    assert "data_parallel_engines" not in {w.code for w in as_plan.warnings}


def test_a_ray_cluster_linked_beside_the_servers_does_not_hide_their_comparison(
    make_target, s1_plan, viewer_client
):
    # Listed first by name: the plan page must still compare the vLLM replica, not explain
    # that a Ray cluster cannot be compared.
    make_target(name="a-pool", kind="ray", base_url="http://127.0.0.1:9/ray", plan=s1_plan)
    replica = make_target(name="b-replica", plan=s1_plan)
    feed_simulated(replica, _replica("b", blocks=plan_values(s1_plan).replica.kv_blocks))

    html = reality_section(viewer_client, s1_plan.get_absolute_url())

    assert f'href="{replica.get_absolute_url()}?scope=plan"'.encode() in html
    assert b"compares vLLM servers with the plan" not in html


def test_a_plan_with_only_a_ray_cluster_linked_says_what_to_link(
    make_target, s1_plan, viewer_client
):
    make_target(name="pool", kind="ray", base_url="http://127.0.0.1:9/ray", plan=s1_plan)

    html = reality_section(viewer_client, s1_plan.get_absolute_url())

    assert b"compares vLLM servers with the plan" in html


def test_impossible_numbers_in_the_servers_labels_are_not_a_500(
    make_target, s1_plan, viewer_client
):
    # cache_config_info labels are the server's text: "inf" once made int() raise.
    target = make_target(name="odd-labels", plan=s1_plan)
    Target.objects.filter(pk=target.pk).update(
        info={
            "engines": "inf",
            "cache_config": {
                "num_gpu_blocks": "inf",
                "block_size": "1e400",
                "tensor_parallel_size": "-inf",
                "gpu_memory_utilization": "nan",
            },
        }
    )
    target.refresh_from_db()
    start, end = resolve_range("1h")

    rows = _rows(plan_comparison(target, start=start, end=end))

    assert rows["kv_blocks"].observed is None
    assert viewer_client.get(target.get_absolute_url()).status_code == 200


def test_a_missing_replica_is_shown_as_beyond_tolerance_not_over_the_slo(
    make_target, s1_plan, viewer_client
):
    import re

    target = make_target(name="lonely", plan=s1_plan)
    feed_simulated(target, _replica("lonely", blocks=plan_values(s1_plan).replica.kv_blocks))

    html = viewer_client.get(target.get_absolute_url() + "?scope=plan").content.decode()

    row = re.search(r'<tr data-quantity="replicas".*?</tr>', html, re.S).group(0)
    assert "deviation-out" in row  # 1 linked, 2 planned: a tolerance of 0 is broken
    assert "beyond" in row
    assert "over the SLO" not in row


def test_the_comparison_units_are_words_of_the_readers_language(
    two_replicas, viewer_client, settings
):
    import re

    a, _ = two_replicas
    viewer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"

    html = viewer_client.get(a.get_absolute_url()).content.decode()

    row = re.search(r'<tr data-quantity="kv_blocks".*?</tr>', html, re.S).group(0)
    assert "<td>块</td>" in row
    answer = viewer_client.get(f"/api/v1/monitoring/targets/{a.pk}/plan-comparison/").json()
    assert {r["unit"] for r in answer["rows"]} >= {"blocks", "ms"}  # the API keeps the ids


def test_the_planner_pages_read_the_plan_once_not_once_per_replica(
    two_replicas, s1_plan, planner, viewer_client
):
    import re

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from planner.decisions.services import decision_create

    decision = decision_create(actor=planner, title="llama on a800", plan=s1_plan)
    for url in (s1_plan.get_absolute_url(), decision.get_absolute_url()):
        page = viewer_client.get(url).content
        section = re.search(rb'data-reality-url="([^"]+)"', page).group(1).decode()
        with CaptureQueriesContext(connection) as queries:
            html = viewer_client.get(section).content.decode()
        sql = [q["sql"] for q in queries.captured_queries]
        # The targets' query never carries the plan's result (no copy per replica) ...
        assert not [q for q in sql if '"monitoring_target"' in q and '"result"' in q], url
        # ... and the comparison still ran (its link to the full comparison is shown).
        assert "/?scope=plan" in html, url


def test_the_planner_pages_run_no_monitoring_query_while_they_render(
    two_replicas, s1_plan, planner, viewer_client
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from planner.decisions.services import decision_create

    decision = decision_create(actor=planner, title="llama on a800", plan=s1_plan)
    for url in (s1_plan.get_absolute_url(), decision.get_absolute_url()):
        with CaptureQueriesContext(connection) as queries:
            page = viewer_client.get(url)
        assert page.status_code == 200, url
        tables = ('"monitoring_target"', '"monitoring_sample"', '"monitoring_rollup"')
        sql = [q["sql"] for q in queries.captured_queries]
        assert not [q for q in sql if any(table in q for table in tables)], url
        assert b"data-reality-url=" in page.content, url  # the section follows the page
