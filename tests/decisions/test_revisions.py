"""Every edit is a revision; any two revisions diff; concurrent edits never overwrite silently."""

import threading

import pytest
from django.db import connection

from planner.decisions import services
from planner.decisions.models import DecisionRecord
from planner.decisions.revisions import diff
from tests.decisions.conftest import complete_decision, form_data, make_decision


def test_each_write_adds_a_revision_with_who_when_and_what(planner, admin_user):
    decision = make_decision(planner, context="First line.\nSecond line.")
    services.decision_update(
        decision=decision,
        actor=admin_user,
        expected_version=1,
        context="First line.\nSecond line, reworded.",
        responsibilities={"allocation": {"owner": "Slurm", "mechanism": "salloc --exclusive"}},
    )

    revisions = list(decision.revisions.order_by("number"))
    assert [r.number for r in revisions] == [1, 2]
    assert [r.action for r in revisions] == ["created", "edited"]
    assert revisions[1].author == admin_user
    assert revisions[1].author_label == "ada-admin"
    assert revisions[1].changed_fields == [
        "context",
        "responsibilities.allocation.owner",
        "responsibilities.allocation.mechanism",
    ]
    decision.refresh_from_db()
    assert decision.version == 2


def test_saving_without_a_change_adds_no_revision(planner):
    decision = make_decision(planner, title="Same")

    services.decision_update(decision=decision, actor=planner, expected_version=1, title="Same")

    assert decision.revisions.count() == 1


def test_diff_between_any_two_revisions(planner):
    decision = make_decision(planner, context="a\nb\nc")
    services.decision_update(
        decision=decision, actor=planner, expected_version=1, context="a\nB\nc"
    )
    services.decision_update(decision=decision, actor=planner, expected_version=2, title="Renamed")
    r1, r3 = (decision.revisions.get(number=n).snapshot for n in (1, 3))

    changes = {c.key: c for c in diff(r1, r3)}

    assert set(changes) == {"title", "context"}
    assert changes["title"].new == "Renamed"
    assert ("-", "b") in changes["context"].lines
    assert ("+", "B") in changes["context"].lines
    assert (" ", "a") in changes["context"].lines


def test_diff_page_and_api(planner_client, planner_api, planner):
    decision = make_decision(planner, title="Before")
    services.decision_update(decision=decision, actor=planner, expected_version=1, title="After")

    page = planner_client.get(f"/decisions/{decision.number}/diff/?a=1&b=2")
    api = planner_api.get(f"/api/v1/decisions/{decision.number}/diff/?a=1&b=2")
    listing = planner_client.get(f"/decisions/{decision.number}/revisions/")

    assert page.status_code == 200
    assert "Before" in page.content.decode()
    assert "After" in page.content.decode()
    assert api.json()["changes"][0]["key"] == "title"
    assert listing.status_code == 200
    assert planner_client.get(f"/decisions/{decision.number}/diff/?a=1&b=9").status_code == 404


def test_a_stale_version_is_refused_with_the_other_change(planner, admin_user):
    decision = make_decision(planner, title="Original")
    # Both read version 1; the admin saves first.
    services.decision_update(decision=decision, actor=admin_user, expected_version=1, title="Admin")

    with pytest.raises(services.DecisionConflict) as conflict:
        services.decision_update(
            decision=decision, actor=planner, expected_version=1, title="Planner"
        )

    assert conflict.value.current_version == 2
    assert [(c.key, c.old, c.new) for c in conflict.value.changes] == [
        ("title", "Original", "Admin")
    ]
    assert DecisionRecord.objects.get(pk=decision.pk).title == "Admin"


def test_the_edit_page_shows_the_conflict_and_keeps_the_input(planner_client, planner, admin_user):
    decision = complete_decision(planner)
    data = form_data(planner_client.get(f"/decisions/{decision.number}/edit/"))
    data["title"] = "Planner's title"
    services.decision_update(
        decision=decision, actor=admin_user, expected_version=1, title="Admin's title"
    )

    response = planner_client.post(f"/decisions/{decision.number}/edit/", data)

    assert response.status_code == 409
    body = response.content.decode()
    assert "changed while you were editing" in body
    assert "Admin&#x27;s title" in body
    assert 'value="Planner&#x27;s title"' in body
    assert 'name="version" value="2"' in body
    assert DecisionRecord.objects.get(pk=decision.pk).title == "Admin's title"

    # Having seen the diff, saving again is an explicit choice and succeeds.
    data["version"] = 2
    again = planner_client.post(f"/decisions/{decision.number}/edit/", data)
    assert again.status_code == 302
    assert DecisionRecord.objects.get(pk=decision.pk).title == "Planner's title"


def test_the_api_answers_409_with_the_changes(planner_api, planner, admin_user):
    decision = make_decision(planner, title="Original")
    services.decision_update(decision=decision, actor=admin_user, expected_version=1, title="Admin")

    response = planner_api.patch(
        f"/api/v1/decisions/{decision.number}/", {"title": "Mine", "version": 1}, format="json"
    )

    assert response.status_code == 409
    assert response.json()["current_version"] == 2
    assert response.json()["changes"][0]["new"] == "Admin"


def test_an_api_update_without_a_version_is_refused(planner_api, planner):
    decision = make_decision(planner)

    response = planner_api.patch(
        f"/api/v1/decisions/{decision.number}/", {"title": "Mine"}, format="json"
    )

    assert response.status_code == 400
    assert "version" in response.json()


@pytest.mark.django_db(transaction=True)
def test_numbers_stay_unique_under_concurrent_creates(django_user_model):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers; the race needs PostgreSQL (CI)")
    user = django_user_model.objects.create_user(username="racer", password="pw-for-tests-1")
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def create(i: int) -> None:
        try:
            barrier.wait()
            services.decision_create(actor=user, title=f"race {i}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert sorted(DecisionRecord.objects.values_list("number", flat=True)) == list(range(1, 9))


def test_numbers_continue_after_the_highest(planner):
    first = make_decision(planner)
    second = make_decision(planner)

    assert (first.number, second.number) == (1, 2)
    assert second.label == "DR-0002"


def test_the_revision_list_names_changed_fields_by_their_labels(viewer_client, planner):
    decision = make_decision(planner, title="Before")
    services.decision_update(
        decision=decision,
        actor=planner,
        expected_version=1,
        pool_kind="shared",
        responsibilities={"allocation": {"owner": "Slurm"}},
    )

    body = viewer_client.get(f"/decisions/{decision.number}/revisions/").content.decode()

    assert "2 fields: pool kind; Who allocates the GPUs to this replica — owner" in body
