"""The what-if change summary says what the engine saw differently and what followed, and never
contradicts itself or the difference table, whatever is changed."""

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planner.engine.shown import shown_tok_s
from planner.engine.spec import SpecError
from planner.forms.whatif import LINKS, WhatIfForm
from planner.presentation.changes import ANSWERS, what_if_summary
from planner.selectors import plan_result
from planner.services import compare_results, plan_create, plan_evaluate

pytestmark = pytest.mark.django_db

CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "machine_count": st.integers(1, 6),
        "gpu": st.sampled_from(["a100-80g-sxm", "h100-sxm", "l40s", "rtx-4090", "a800-80g-sxm"]),
        "link": st.sampled_from(sorted(LINKS)),
        "weight_dtype": st.sampled_from(["bf16", "fp8", "int8", "int4"]),
        "kv_cache_dtype": st.sampled_from(["auto", "fp8"]),
        "max_model_len": st.sampled_from([2048, 8192, 16384, 32768]),
        "concurrency": st.sampled_from([1, 8, 32, 64, 256]),
    },
).filter(bool)


def _summary(plan, data):
    form = WhatIfForm({k: str(v) for k, v in data.items()})
    assert form.is_valid(), form.errors
    spec = form.changed_spec(plan.spec)
    try:
        evaluation = plan_evaluate(spec=spec)
    except SpecError:
        return None, None, form
    comparison = compare_results(
        left_result=plan_result(plan),
        right_result=evaluation.result,
        left_spec=plan.spec,
        right_spec=spec,
    )
    summary = what_if_summary(
        plan=plan,
        spec=spec,
        evaluation=evaluation,
        comparison=comparison,
        requested=form.requested_answers(),
    )
    return summary, comparison, form


@pytest.fixture
def s2a_plan(demo_fleet, planner, s2a_spec):
    return plan_create(spec=s2a_spec, actor=planner)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=CHANGES)
def test_the_summary_never_contradicts_itself_or_the_table(s2a_plan, data):
    summary, comparison, form = _summary(s2a_plan, data)
    assume(summary is not None)
    requested = set(form.requested_answers())

    changed = {c.key for c in summary.answers}
    already = {c.key for c in summary.already}
    assert all(c.before != c.after for c in summary.answers)
    assert all(c.before == c.after for c in summary.already)
    assert not changed & already
    assert already <= requested
    assert requested <= changed | already  # every answer asked for is accounted for
    assert changed <= set(ANSWERS)

    table = {r.key for r in comparison.recommendation + comparison.figures if r.changed}
    assert {c.key for c in summary.outcome} == table
    assert all(c.before != c.after for c in summary.outcome)
    assert summary.changes_nothing == (not table)
    assert bool(summary.why) == bool(table)

    left, right = plan_result(s2a_plan).best, None
    for line in summary.why:
        if "rises" in line or "falls" in line:
            right = right or _evaluated_best(s2a_plan, form)
            rises = shown_tok_s(right) > shown_tok_s(left)  # the figure the page shows
            assert ("rises" in line) == rises


def _evaluated_best(plan, form):
    return plan_evaluate(spec=form.changed_spec(plan.spec)).result.best


def test_an_answer_that_was_already_so_is_said_to_be_unchanged(s2a_plan):
    summary, _comparison, _form = _summary(s2a_plan, {"weight_dtype": "bf16"})  # the plan's own

    assert [c.key for c in summary.already] == ["weight_dtype"]
    assert summary.answers == ()
    assert summary.changes_nothing
    assert summary.why == ()


def test_more_concurrency_says_what_changed_and_why(s2a_plan):
    summary, _comparison, _form = _summary(s2a_plan, {"concurrency": 256, "machine_count": 1})

    answers = {c.key: (c.before, c.after) for c in summary.answers}
    assert answers["concurrency"] == ("32", "256")
    assert answers["machines"] == ("2", "1")
    assert not summary.changes_nothing
    assert summary.why


def test_the_page_shows_the_summary(planner_client, s2a_plan):
    page = planner_client.get(
        f"/plans/{s2a_plan.public_id}/what-if/", {"concurrency": "256", "weight_dtype": "bf16"}
    ).content.decode()

    section = re.search(r'data-testid="change-summary".*?</section>', page, re.S).group(0)
    assert "Concurrent sequences: 32 → <mark>256</mark>" in section
    assert "Already so in the saved plan, so unchanged:" in section
    assert "Weight precision (bf16)" in section
