"""Calibration from linked simulated targets: versioned profiles, provenance, plans using them."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitoring.reality.calibration import calibration_create, calibration_run
from monitoring.selectors import resolve_range
from planner.models import CalibrationProfile, Plan
from planner.selectors.plan_values import plan_values
from planner.services import plan_rerun
from planner.services.plans import plan_with_calibration
from tests.monitoring.simulated import feed_simulated
from tests.monitoring.test_plan_comparison import _replica, s1_plan, two_replicas  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_window_of_two_replicas_becomes_a_versioned_profile(two_replicas, planner):  # noqa: F811
    start, end = resolve_range("1h")

    first = calibration_create(targets=list(two_replicas), start=start, end=end, actor=planner)
    second = calibration_create(targets=list(two_replicas), start=start, end=end, actor=planner)

    assert first.key == "a800-80g-sxm/llama/int8"
    assert (first.version, second.version) == (1, 2)
    assert {s["target"] for s in first.sources} == {"s1-replica-a", "s1-replica-b"}
    assert (first.window_start, first.window_end) == (start, end)
    assert first.observations >= 4
    kv = first.factors["kv_overhead_gib"]
    assert kv["fitted"]
    assert kv["unit"] == "GiB"
    assert kv["value"] > 0
    assert first.factors["decode_efficiency"]["fitted"]
    assert {r["quantity"] for r in first.residuals} >= {"itl_ms", "kv_blocks"}
    assert first.rms_error_after_pct <= first.rms_error_before_pct


def test_a_plan_made_with_a_profile_says_so_and_keeps_it(two_replicas, s1_plan, planner):  # noqa: F811
    start, end = resolve_range("1h")
    profile = calibration_create(targets=list(two_replicas), start=start, end=end, actor=planner)

    calibrated = plan_with_calibration(plan=s1_plan, profile=profile, actor=planner)

    assert calibrated.calibration == profile
    assert calibrated.result["calibration"]["profile"] == str(profile.public_id)
    assert calibrated.result["calibration"]["version"] == 1
    assert calibrated.result["calibration"]["matches_layout"] is True
    assert calibrated.spec["calibration"] == str(profile.public_id)
    assert plan_values(calibrated).calibration.key == profile.key
    # The KV overhead costs blocks: the calibrated plan predicts fewer than the original.
    assert plan_values(calibrated).replica.kv_blocks < plan_values(s1_plan).replica.kv_blocks
    # A later refit does not change an old plan: a re-run keeps the version it named.
    calibration_create(targets=list(two_replicas), start=start, end=end, actor=planner)
    again = plan_rerun(plan=calibrated, actor=planner)
    assert again.calibration == profile
    assert plan_values(again).replica.kv_blocks == plan_values(calibrated).replica.kv_blocks


def test_targets_of_different_keys_cannot_share_a_profile(two_replicas, make_target, planner):  # noqa: F811
    from planner.services import plan_create
    from tests.planner.conftest import S2A_SPEC

    qwen = plan_create(spec={**S2A_SPEC}, actor=planner)
    other = make_target(name="qwen-replica", plan=qwen)
    feed_simulated(other, _replica("q", blocks=5000, model="Qwen/Qwen2.5-32B-Instruct"))
    start, end = resolve_range("1h")

    with pytest.raises(ValidationError) as err:
        calibration_run(targets=[*two_replicas, other], start=start, end=end)

    assert "targets" in err.value.message_dict
    assert CalibrationProfile.objects.count() == 0


def test_an_unknown_profile_in_a_spec_names_the_field(planner):
    from planner.engine.spec import SpecError
    from planner.services import plan_evaluate
    from tests.planner.conftest import S1_SPEC
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    with pytest.raises(SpecError) as err:
        plan_evaluate(spec={**S1_SPEC, "calibration": "not-a-uuid"})
    assert "calibration" in err.value.errors


def test_the_pages_preview_save_and_show_before_and_after(two_replicas, planner_client):  # noqa: F811
    a, b = two_replicas
    listing = planner_client.get("/monitoring/calibration/")
    assert listing.status_code == 200
    assert b"s1-replica-a" in listing.content

    preview = planner_client.post(
        "/monitoring/calibration/fit/",
        {"targets": [a.pk, b.pk], "range": "1h", "action": "preview"},
    )
    assert preview.status_code == 200
    assert b"a800-80g-sxm/llama/int8" in preview.content
    assert CalibrationProfile.objects.count() == 0
    run = preview.context["run"]

    saved = planner_client.post(
        "/monitoring/calibration/fit/",
        {
            "targets": [a.pk, b.pk],
            "start": run.start.isoformat(),
            "end": run.end.isoformat(),
            "action": "save",
        },
    )
    profile = CalibrationProfile.objects.get()
    assert saved.status_code == 302
    assert saved.url == profile.get_absolute_url()
    detail = planner_client.get(profile.get_absolute_url())
    assert detail.status_code == 200
    assert b"Before" in detail.content
    assert b"After" in detail.content
    assert detail.content.count(b'data-quantity="itl_ms"') >= 2

    empty = planner_client.post(
        "/monitoring/calibration/fit/", {"range": "1h", "action": "preview"}
    )
    assert empty.status_code == 400


@pytest.mark.parametrize(
    "start", ["2026-13-45T00:00:00+00:00", "2026-11-28T11:00:00", "soon"], ids=str
)
def test_a_malformed_window_is_a_form_error_not_a_500(planner_client, start):
    response = planner_client.post(
        "/monitoring/calibration/fit/",
        {"start": start, "end": "2026-11-28T12:00:00+00:00", "action": "preview"},
    )
    assert response.status_code == 400
    assert "window" in response.context["errors"]


def test_viewers_cannot_fit(viewer_client):
    response = viewer_client.post("/monitoring/calibration/fit/", {"range": "1h"})
    assert response.status_code == 403


def test_what_if_with_a_profile_shows_the_calibrated_plan_beside_and_saves_it(
    two_replicas,  # noqa: F811
    s1_plan,  # noqa: F811
    planner,
    planner_client,
):
    start, end = resolve_range("1h")
    profile = calibration_create(targets=list(two_replicas), start=start, end=end, actor=planner)
    url = f"/plans/{s1_plan.public_id}/what-if/"

    page = planner_client.get(s1_plan.get_absolute_url())
    assert f"{profile.key} v1".encode() in page.content  # offered in the what-if form

    preview = planner_client.get(url, {"calibration": str(profile.public_id)})
    assert preview.status_code == 200
    saved = planner_client.post(url, {"calibration": str(profile.public_id)})
    assert saved.status_code == 302
    new = Plan.objects.get(calibration=profile)
    assert saved.url == new.get_absolute_url()
    shown = planner_client.get(new.get_absolute_url())
    assert b'data-testid="plan-calibration"' in shown.content


def test_the_api_fits_lists_and_reads_profiles(two_replicas, planner_api, viewer_api):  # noqa: F811
    a, b = two_replicas

    created = planner_api.post(
        "/api/v1/monitoring/calibration-profiles/",
        {"targets": [a.pk, b.pk], "window": "1h"},
        format="json",
    )

    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["key"] == "a800-80g-sxm/llama/int8"
    assert body["version"] == 1
    assert set(body["factors"]) == {
        "kv_overhead_gib",
        "decode_efficiency",
        "prefill_efficiency",
        "per_request_overhead_ms",
    }
    assert {"value", "stderr", "fitted", "unit"} <= set(body["factors"]["decode_efficiency"])
    listed = viewer_api.get("/api/v1/monitoring/calibration-profiles/?key=a800-80g-sxm/llama/int8")
    assert listed.status_code == 200
    one = viewer_api.get(f"/api/v1/monitoring/calibration-profiles/{body['public_id']}/")
    assert one.json()["sources"][0]["target"] in {"s1-replica-a", "s1-replica-b"}
    refused = viewer_api.post(
        "/api/v1/monitoring/calibration-profiles/", {"targets": [a.pk]}, format="json"
    )
    assert refused.status_code == 403
    empty = planner_api.post(
        "/api/v1/monitoring/calibration-profiles/", {"targets": []}, format="json"
    )
    assert empty.status_code == 400
    assert "targets" in empty.json()


def test_a_fit_reads_each_targets_window_once(two_replicas):  # noqa: F811
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    start, end = resolve_range("1h")
    with CaptureQueriesContext(connection) as queries:
        run = calibration_run(targets=list(two_replicas), start=start, end=end)

    reads = [q["sql"] for q in queries.captured_queries if '"monitoring_sample"' in q["sql"]]
    assert len(reads) == len(two_replicas)
    assert run.fit.observations >= 4
