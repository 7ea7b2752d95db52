"""Pages: list with filters, the document, create from a plan, accept, print, permissions."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from planner.decisions import services
from planner.decisions.models import DecisionRecord, Status
from tests.decisions.conftest import PASSING, complete_decision, form_data, make_decision

XSS = '<script>alert("x")</script><img src=x onerror="alert(1)"><a href="javascript:alert(2)">l</a>'


def test_create_from_plan_prefills_and_saves(planner_client, planner, s1_static_plan):
    url = f"/decisions/new/from-plan/{s1_static_plan.public_id}/"
    page = planner_client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "To confirm:" in body  # what the plan cannot know, for the team to fill in
    # Guidance for both pool kinds is present; the dedicated one is visible.
    assert 'data-pool="dedicated">' in body
    assert 'data-pool="shared" hidden' in body

    response = planner_client.post(url, form_data(page))

    assert response.status_code == 302
    decision = DecisionRecord.objects.get()
    assert decision.plan == s1_static_plan
    assert response["Location"] == f"/decisions/{decision.number}/"
    assert decision.responsibilities.get(kind="allocation").owner == ""
    assert list(decision.authors.all()) == [planner]


def test_create_from_an_unknown_plan_is_404(planner_client):
    assert (
        planner_client.get(
            "/decisions/new/from-plan/00000000-0000-4000-8000-000000000000/"
        ).status_code
        == 404
    )


def test_create_without_a_plan(planner_client, planner):
    page = planner_client.get("/decisions/new/")
    data = form_data(page)
    data["title"] = "Serve the 8B model on the workstation"

    response = planner_client.post("/decisions/new/", data)

    assert response.status_code == 302
    assert DecisionRecord.objects.get().plan is None


def test_create_needs_a_title(planner_client):
    response = planner_client.post("/decisions/new/", {"pool_kind": "dedicated"})

    assert response.status_code == 400
    assert DecisionRecord.objects.count() == 0


def test_the_detail_page_reads_like_a_document(viewer_client, planner, s3_static_plan):
    decision = services.decision_create_from_plan(plan=s3_static_plan, actor=planner)

    body = viewer_client.get(f"/decisions/{decision.number}/").content.decode()

    for heading in ("Context", "Decision", "Ownership", "Evidence", "Alternatives considered"):
        assert f"<h2>{heading}</h2>" in body
    assert "Ray placement group" in body
    assert decision.verifiable_sentence in body
    assert "has no owner" in body  # the readiness checklist names the missing owner
    # A plan saved before the serving model has closed-form means only: no p95 is made up.
    assert "254 ms" not in body


def test_the_plan_estimate_is_the_serving_p95_the_plan_page_shows(
    viewer_client, planner, s1_engine_plan
):
    from planner.presentation.numbers import amount
    from planner.selectors import plan_result

    best = plan_result(s1_engine_plan).best
    decision = services.decision_create_from_plan(plan=s1_engine_plan, actor=planner)

    body = viewer_client.get(f"/decisions/{decision.number}/").content.decode()
    plan_page = viewer_client.get(s1_engine_plan.get_absolute_url()).content.decode()

    shown = amount(best.serving.ttft_p95_ms)
    assert f"{shown} ms" in body
    assert shown in plan_page  # the plan page's p95, the same number
    assert f"{amount(best.ttft_ms)} ms" not in body  # never the closed-form mean


def test_accept_flow_refuses_then_accepts_with_open_evidence(planner_client, planner):
    decision = complete_decision(planner, measured={**PASSING, "ttft_p95": 999})
    url = f"/decisions/{decision.number}/accept/"

    refused = planner_client.post(url, {"version": decision.version})
    assert refused.status_code == 400
    assert "fails: measured 999 ms" in refused.content.decode()
    assert DecisionRecord.objects.get(pk=decision.pk).status == Status.PROPOSED

    accepted = planner_client.post(url, {"version": decision.version, "with_open_evidence": "on"})
    assert accepted.status_code == 302
    decision.refresh_from_db()
    assert decision.status == Status.ACCEPTED
    assert decision.accepted_with_open_evidence
    detail = planner_client.get(f"/decisions/{decision.number}/").content.decode()
    assert "Accepted with open evidence." in detail
    listing = planner_client.get("/decisions/").content.decode()
    assert "accepted with open evidence" in listing


def test_accepting_an_incomplete_record_lists_what_is_missing(planner_client, planner):
    decision = make_decision(planner)

    response = planner_client.post(
        f"/decisions/{decision.number}/accept/", {"version": decision.version}
    )

    assert response.status_code == 400
    body = response.content.decode()
    assert "Not accepted" in body
    assert "The verifiable sentence is missing." in body
    assert body.count("has no threshold") >= 6


def test_editing_a_superseded_record_is_refused(planner_client, planner):
    old = complete_decision(planner, measured=PASSING)
    services.decision_accept(decision=old, actor=planner)
    new = make_decision(planner, title="Successor")
    services.decision_supersede(decision=old, superseded_by=new, actor=planner)

    get = planner_client.get(f"/decisions/{old.number}/edit/")
    post = planner_client.post(f"/decisions/{old.number}/edit/", {"title": "x", "version": 3})
    detail = planner_client.get(f"/decisions/{old.number}/").content.decode()

    assert get.status_code == 302
    assert post.status_code == 302
    assert DecisionRecord.objects.get(pk=old.pk).title != "x"
    assert "This record is read-only." in detail
    assert f"/decisions/{old.number}/edit/" not in detail
    new_detail = planner_client.get(f"/decisions/{new.number}/").content.decode()
    assert f"/decisions/{old.number}/" in new_detail


def test_supersede_page_and_successor_draft(planner_client, planner):
    old = complete_decision(planner, measured=PASSING)
    services.decision_accept(decision=old, actor=planner)

    draft = planner_client.post(f"/decisions/{old.number}/successor/")
    new = DecisionRecord.objects.exclude(pk=old.pk).get()
    assert draft["Location"] == f"/decisions/{new.number}/edit/"
    assert new.responsibilities.get(kind="recovery").owner == "SRE on call"

    old.refresh_from_db()
    response = planner_client.post(
        f"/decisions/{old.number}/supersede/",
        {"version": old.version, "superseded_by": new.pk},
    )
    assert response.status_code == 302
    old.refresh_from_db()
    assert old.superseded_by == new


def test_markdown_in_text_fields_is_rendered_inert(viewer_client, planner):
    decision = make_decision(
        planner,
        title=XSS[:150],
        context=f"**bold** {XSS}",
        decision_text=XSS,
        alternatives=f"- [x](javascript:alert(3)) {XSS}",
        consequences=XSS,
        verifiable_sentence=XSS,
        responsibilities={"allocation": {"owner": XSS[:200], "mechanism": XSS}},
        evidence={"ttft_p95": {"threshold": 1, "note": XSS}},
    )

    pages = [
        viewer_client.get(f"/decisions/{decision.number}/"),
        viewer_client.get(f"/decisions/{decision.number}/print/"),
        viewer_client.get("/decisions/"),
        viewer_client.get(f"/decisions/{decision.number}/revisions/"),
    ]

    for page in pages:
        body = page.content.decode()
        assert page.status_code == 200
        assert '<script>alert("x")' not in body
        assert "onerror=" not in body.replace("onerror=&quot;", "")
        assert 'href="javascript:' not in body
    assert "<strong>bold</strong>" in pages[0].content.decode()


def test_print_view_and_markdown_download(viewer_client, planner):
    decision = complete_decision(planner)

    printed = viewer_client.get(f"/decisions/{decision.number}/print/")
    exported = viewer_client.get(f"/decisions/{decision.number}/export.md")

    assert printed.status_code == 200
    assert b"data-print" in printed.content
    assert b'class="topbar"' not in printed.content
    assert exported["Content-Type"] == "text/markdown; charset=utf-8"
    assert "0001-keep-mp-on-the-dedicated-nodes.md" in exported["Content-Disposition"]
    assert exported.content.decode().startswith("# DR-0001: Keep mp on the dedicated nodes")


def test_no_inline_script_on_any_page(planner_client, planner):
    decision = complete_decision(planner)
    urls = [
        "/decisions/",
        "/decisions/new/",
        f"/decisions/{decision.number}/",
        f"/decisions/{decision.number}/edit/",
        f"/decisions/{decision.number}/accept/",
        f"/decisions/{decision.number}/revisions/",
        f"/decisions/{decision.number}/diff/?a=1&b=1",
        f"/decisions/{decision.number}/print/",
    ]
    for url in urls:
        body = planner_client.get(url).content.decode()
        assert "<script>" not in body, url
        assert " onclick=" not in body, url


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("status=accepted", ["A"]),
        ("status=proposed", ["C", "B"]),
        ("owner=Slurm", ["B"]),
        ("owner=pat-planner", ["C", "B", "A"]),
        ("model=qwen", ["B"]),
        ("route=B", ["B"]),
        ("pool_kind=shared", ["C"]),
        ("q=DR-0003", ["C"]),
    ],
    ids=["status-accepted", "status-proposed", "owner", "author", "model", "route", "pool", "q"],
)
def test_list_filters(viewer_client, planner, query, expected):
    a = complete_decision(
        planner, measured=PASSING, title="A", model_name="Llama-3.1-70B", route="A"
    )
    services.decision_accept(decision=a, actor=planner)
    make_decision(
        planner,
        title="B",
        model_name="Qwen2.5-72B",
        route="B",
        responsibilities={"allocation": {"owner": "Slurm"}},
    )
    make_decision(planner, title="C", pool_kind="shared")

    response = viewer_client.get(f"/decisions/?{query}")

    assert [d.title for d in response.context["decisions"]] == expected


def test_list_query_count_does_not_grow_with_rows(viewer_client, planner, s1_static_plan):
    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert viewer_client.get("/decisions/").status_code == 200
        return len(ctx)

    services.decision_create_from_plan(plan=s1_static_plan, actor=planner)
    one = count()
    for _ in range(5):
        services.decision_create_from_plan(plan=s1_static_plan, actor=planner)
    six = count()

    assert six == one
    assert one <= 12


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/decisions/new/"),
        ("post", "/decisions/new/"),
        ("get", "/decisions/{n}/edit/"),
        ("post", "/decisions/{n}/edit/"),
        ("get", "/decisions/{n}/accept/"),
        ("post", "/decisions/{n}/accept/"),
        ("post", "/decisions/{n}/reject/"),
        ("get", "/decisions/{n}/supersede/"),
        ("post", "/decisions/{n}/successor/"),
    ],
)
def test_viewers_cannot_write(viewer_client, planner, method, url):
    decision = make_decision(planner)

    response = getattr(viewer_client, method)(url.format(n=decision.number))

    assert response.status_code == 403
    assert DecisionRecord.objects.count() == 1


@pytest.mark.parametrize(
    "url",
    ["/decisions/", "/decisions/{n}/", "/decisions/{n}/print/", "/decisions/{n}/revisions/"],
)
def test_viewers_read_and_anonymous_users_are_sent_to_login(viewer_client, client, planner, url):
    decision = make_decision(planner)

    assert viewer_client.get(url.format(n=decision.number)).status_code == 200
    anonymous = client.get(url.format(n=decision.number))
    assert anonymous.status_code == 302
    assert "/login" in anonymous["Location"]


def test_admin_pages_render(admin_client_, planner):
    decision = complete_decision(planner)

    assert admin_client_.get("/admin/decisions/decisionrecord/").status_code == 200
    assert (
        admin_client_.get(f"/admin/decisions/decisionrecord/{decision.pk}/change/").status_code
        == 200
    )
    assert admin_client_.get("/admin/decisions/decisionrevision/").status_code == 200


def test_list_shows_each_owner_once_and_filters_open_evidence(viewer_client, planner):
    accepted = complete_decision(planner, measured={**PASSING, "ttft_p95": 999})
    services.decision_accept(decision=accepted, actor=planner, with_open_evidence=True)
    make_decision(planner, title="Other")

    body = viewer_client.get("/decisions/").content.decode()
    flagged = viewer_client.get("/decisions/?open_evidence=true").context["decisions"]

    assert body.count('<span class="dr-owner">Existing platform</span>') == 1
    assert [d.title for d in flagged] == [accepted.title]
