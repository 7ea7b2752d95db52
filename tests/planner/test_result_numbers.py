"""The result page writes numbers for the reader's locale: grouped thousands, whole counts, units,
and proper plurals (never "replica(s)")."""

import re

import pytest
from django.conf import settings

from planner.services import plan_create

pytestmark = pytest.mark.django_db


def _section(page: str, start: str) -> str:
    found = re.search(re.escape(start) + r".*?</(table|section)>", page, re.S)
    assert found, start
    return found.group(0)


def _cells(table: str, column: int) -> list[str]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    return [c[column].strip() for c in cells if len(c) > column]


@pytest.fixture
def page(demo_fleet, planner, planner_client, s1_spec):
    plan = plan_create(spec=s1_spec, actor=planner)

    def get(language: str) -> str:
        planner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        return planner_client.get(plan.get_absolute_url()).content.decode()

    return get


def test_the_layouts_table_groups_thousands_and_counts_whole_sequences(page):
    table = _section(page("en"), '<table class="candidates">')

    kv_tokens = _cells(table, 4)
    sequences = _cells(table, 5)

    assert kv_tokens
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", v) for v in kv_tokens), kv_tokens
    assert any("," in v for v in kv_tokens)  # 70B int8 on A800s: > 1,000 KV tokens a replica
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", v) for v in sequences), sequences


def test_the_chinese_page_groups_thousands_too(page):
    # config/formats/zh_Hans: Django's own zh_Hans formats would show "1502080".
    table = _section(page("zh-hans"), '<table class="candidates">')

    kv_tokens = _cells(table, 4)

    assert kv_tokens
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", v) for v in kv_tokens), kv_tokens
    assert any("," in v for v in kv_tokens)


def test_verdict_routes_and_tables_use_proper_plurals(page):
    html = page("en")
    shown = "".join(
        _section(html, start)
        for start in (
            'data-testid="verdict"',
            'data-testid="routes"',
            '<table class="candidates">',
            'data-testid="serving-predictions"',
        )
    )

    assert "(s)" not in shown
    assert re.search(r"\d copies of TP|1 copy of TP", shown)


def test_the_unit_filters_read_the_locale():
    from django.utils import translation

    from planner.templatetags.plan_numbers import amount, count, figure, seconds

    with translation.override("en"):
        assert count(42.7) == "42"
        assert count(123456) == "123,456"
        assert amount(3146.24, 1) == "3,146.2"
        assert seconds(12345) == "12.3"
        assert figure(64.0) == "64"
        assert figure(1.155) == "1.155"
        assert count(None) == "—"
    with translation.override("zh-hans"):
        assert count(123456) == "123,456"  # config/formats/zh_Hans groups by three


@pytest.mark.parametrize(("replicas", "word"), [(1, "replica on"), (2, "replicas on")])
def test_the_summary_picks_the_plural_and_counts_whole_sequences(replicas, word):
    from django.utils import translation

    from planner.engine import plan, spec_from_dict
    from planner.presentation.messages import english_text, text

    spec = spec_from_dict(
        {
            "model": "qwen3-8b",
            "workload": {"concurrency": 8},
            "hardware": {"node_count": replicas, "gpus_per_node": 1, "gpu": "l40s"},
        }
    )
    recommendation = plan(spec).recommendation
    assert recommendation.replicas == replicas  # one TP1 replica on each single-GPU machine
    summary = recommendation.summary

    with translation.override("en"):
        shown = text(summary)

    assert f"× {replicas} {word}" in shown
    assert "(s)" not in shown
    assert re.search(r"tokens, [\d,]+ sequences of", shown)  # whole: no "182.4 sequences"
    assert english_text(summary) == shown
