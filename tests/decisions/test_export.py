"""ADR Markdown export: golden files, and `manage.py export_decisions DIR` idempotence.

Regenerate the goldens after an intended change with UPDATE_GOLDEN=1.
"""

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import translation

from planner.decisions import services
from planner.decisions.guidance import EVIDENCE_SPECS
from planner.decisions.markdown import export_markdown
from planner.decisions.models import DecisionRecord
from tests.decisions.conftest import FIXED_TIME, PASSING

GOLDEN = Path(__file__).parent / "golden"
DECIDED = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)


def _pin_times(decision: DecisionRecord) -> DecisionRecord:
    decision = DecisionRecord.objects.get(pk=decision.pk)
    DecisionRecord.objects.filter(pk=decision.pk).update(
        created_at=FIXED_TIME, updated_at=FIXED_TIME
    )
    if decision.decided_at:
        DecisionRecord.objects.filter(pk=decision.pk).update(decided_at=DECIDED)
    return DecisionRecord.objects.for_list().get(pk=decision.pk)


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


def _measure(decision, values):
    for kind, value in values.items():
        decision = DecisionRecord.objects.get(pk=decision.pk)
        services.record_evidence_measurement(
            decision=decision,
            item_kind=kind,
            value=value,
            unit=EVIDENCE_SPECS[kind].unit,
            source="typed",
            note="load test 2026-11-19",
        )


@pytest.fixture(autouse=True)
def _english():
    with translation.override("en"):
        yield


def test_golden_s1_dedicated_accepted(planner, s1_static_plan):
    decision = services.decision_create_from_plan(
        plan=s1_static_plan,
        actor=planner,
        evidence={
            "start_to_serving": {"threshold": 180},
            "ttft_p95": {"threshold": 800},
            "itl_p95": {"threshold": 60},
            "completion_rate": {"threshold": 99.5},
            "drill_recovery": {"threshold": 120},
            "drill_in_flight": {"threshold": 5},
        },
    )
    decision = DecisionRecord.objects.get(pk=decision.pk)
    services.decision_update(
        decision=decision,
        actor=planner,
        expected_version=decision.version,
        # The team confirms who owns what the plan cannot know (it proposes no owner).
        responsibilities={
            "allocation": {"owner": "Platform team"},
            "workers": {"owner": "Platform team"},
            "recovery": {"owner": "Platform team"},
            "proof": {"owner": "Platform team"},
            "ray_benefit": {"owner": "pat-planner"},
        },
    )
    measured = dict(PASSING)
    measured["drill_in_flight"] = 12.5  # the drill failed: in-flight streams were cut off
    _measure(decision, measured)
    decision = DecisionRecord.objects.get(pk=decision.pk)
    services.decision_accept(decision=decision, actor=planner, with_open_evidence=True)

    _check_golden("s1_dedicated_accepted.md", export_markdown(_pin_times(decision)))


def test_golden_s3_shared_proposed(planner, s3_static_plan):
    decision = services.decision_create_from_plan(plan=s3_static_plan, actor=planner)

    _check_golden("s3_shared_proposed.md", export_markdown(_pin_times(decision)))


def test_golden_without_plan_with_markdown_and_pipes(planner):
    decision = services.decision_create(
        actor=planner,
        title="Serve Qwen3-8B on the workstation",
        context="One **RTX 4090**, 24 GB.\n\n| a | b |\n|---|---|\n| 1 | 2 |",
        responsibilities={"allocation": {"owner": "Nobody | me", "mechanism": "line 1\nline 2"}},
    )

    _check_golden("no_plan_proposed.md", export_markdown(_pin_times(decision)))


def test_export_decisions_writes_once_and_rewrites_only_changes(tmp_path, planner, capsys):
    first = services.decision_create(actor=planner, title="Keep mp")
    second = services.decision_create(actor=planner, title="Adopt Ray 在共享池")
    target = tmp_path / "adr"

    call_command("export_decisions", str(target))
    files = sorted(p.name for p in target.iterdir())
    assert files == ["0001-keep-mp.md", "0002-adopt-ray-在共享池.md"]
    mtimes = {p.name: p.stat().st_mtime_ns for p in target.iterdir()}
    assert "2 written, 0 unchanged, 0 removed" in capsys.readouterr().out

    call_command("export_decisions", str(target))
    assert "0 written, 2 unchanged, 0 removed" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in target.iterdir()} == mtimes

    services.decision_update(
        decision=second, actor=planner, expected_version=1, context="Changed context."
    )
    call_command("export_decisions", str(target))
    assert "1 written, 1 unchanged, 0 removed" in capsys.readouterr().out
    assert (target / "0001-keep-mp.md").stat().st_mtime_ns == mtimes["0001-keep-mp.md"]
    assert "Changed context." in (target / "0002-adopt-ray-在共享池.md").read_text()

    services.decision_update(
        decision=first, actor=planner, expected_version=1, title="Keep mp for now"
    )
    call_command("export_decisions", str(target))
    assert "1 written, 1 unchanged, 1 removed" in capsys.readouterr().out
    assert sorted(p.name for p in target.iterdir()) == [
        "0001-keep-mp-for-now.md",
        "0002-adopt-ray-在共享池.md",
    ]


@pytest.mark.django_db
def test_raw_html_in_a_record_does_not_reach_the_markdown_export(planner):
    import markdown

    hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script> <!-- c -->'
    decision = services.decision_create(
        actor=planner,
        title="<b>Keep</b> mp",
        context=hostile,
        consequences="p95 < 200 ms and <a href='javascript:x'>link</a>",
    )

    exported = export_markdown(decision)
    rendered = markdown.markdown(exported, extensions=["tables"])

    for opener in ("<img", "<script", "<b>", "<a ", "<!--"):
        assert opener not in rendered
    assert "p95 < 200 ms" in exported  # a lone '<' is text and stays as written
