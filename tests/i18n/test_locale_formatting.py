"""Dates and numbers follow the reader's locale; chart titles and axis labels are translated."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import formats, translation

from tests.i18n.pseudo import english_words
from tests.i18n.world import build_world

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")


def _zh(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return client


def test_token_dates_use_the_chinese_date_format(admin_client_, admin_user):
    from core.models import ApiToken

    token, _key = ApiToken.issue(user=admin_user, name="ci-01")
    when = datetime(2026, 9, 5, 20, 45, tzinfo=UTC)
    type(token).objects.filter(pk=token.pk).update(created_at=when)

    english = admin_client_.get(reverse("account-tokens")).content.decode()
    chinese = _zh(admin_client_).get(reverse("account-tokens")).content.decode()

    assert "2026年9月5日 20:45" in chinese
    assert "2026年9月5日" not in english
    assert "09/05/2026" in english


def test_numbers_are_grouped_by_thousands_in_both_languages():
    # Django's zh_Hans formats group nothing ("1234567.5"); our format module (config/formats)
    # groups by three with ",", as Chinese technical documents do. Decimals stay ".".
    with translation.override("zh-hans"):
        zh = formats.number_format(1234567.5, 1, force_grouping=True)
        zh_plain = formats.number_format(1234567.5, 1)
    with translation.override("en"):
        en = formats.number_format(1234567.5, 1, force_grouping=True)
    assert en == "1,234,567.5"
    assert zh == "1,234,567.5"
    assert zh_plain == "1234567.5"  # no grouping where a template did not ask for it


def _figures(html: str) -> list[dict]:
    out = []
    for blob in re.findall(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', html, re.S):
        data = json.loads(blob)
        if isinstance(data, dict) and "layout" in data:
            out.append(data)
    return out


def _title(part) -> str:
    if isinstance(part, dict):
        title = part.get("title", part)
        return title.get("text", "") if isinstance(title, dict) else str(title or "")
    return str(part or "")


def test_plan_charts_have_chinese_titles_and_axis_labels(admin_client_, admin_user):
    world = build_world(admin_user)
    url = reverse("planner:plan-detail", kwargs={"public_id": world["plan"].public_id})

    figures = _figures(_zh(admin_client_).get(url).content.decode())

    assert len(figures) >= 4
    for figure in figures:
        layout = figure["layout"]
        title = _title(layout.get("title")) or (layout.get("meta") or {}).get("title", "")
        assert CJK.search(title), layout
        for axis in ("xaxis", "yaxis"):
            label = _title(layout.get(axis, {}))
            assert english_words(label) == [], (axis, label)


def test_monitoring_charts_have_chinese_titles(admin_client_, admin_user):
    world = build_world(admin_user)
    html = (
        _zh(admin_client_)
        .get(reverse("monitoring:target-detail", args=[world["vllm_target"].pk]))
        .content.decode()
    )

    titles = re.findall(r'data-title="([^"]*)"', html)

    assert titles
    assert all(CJK.search(t) for t in titles), titles
    admin_client_.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    english = admin_client_.get(
        reverse("monitoring:target-detail", args=[world["vllm_target"].pk])
    ).content.decode()
    assert "Time to first token" in english
