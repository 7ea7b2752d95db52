"""Downloads are in the reader's language too: the operator README, launch scripts, Markdown."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from tests.i18n.pseudo import english_words
from tests.i18n.world import build_world

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")


def _prose_lines(markdown: str) -> list[str]:
    """Return the lines a reader reads: outside code fences, without `inline code`."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith(("#!", "set ", "cd ", "vllm ", "ray ")):
            continue
        out.append(re.sub(r"`[^`]*`", " ", line))
    return out


def _english_lines(text: str) -> list[tuple[str, list[str]]]:
    return [(line, english_words(line)) for line in _prose_lines(text) if english_words(line)]


@pytest.fixture
def zh_world(client, admin_user):
    with translation.override("zh-hans"):
        world = build_world(admin_user)
    client.force_login(admin_user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return client, world


def test_operator_readme_and_launch_scripts_are_in_chinese(zh_world):
    client, world = zh_world
    url = reverse(
        "planner:plan-export", kwargs={"public_id": world["plan"].public_id, "fmt": "zip"}
    )

    response = client.get(url)

    body = b"".join(response.streaming_content) if response.streaming else response.content
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        files = {n.split("/", 1)[1]: archive.read(n).decode() for n in archive.namelist()}
    readme = files["README.md"]
    assert CJK.search(readme)
    assert _english_lines(readme) == []
    for name, text in files.items():
        if name.startswith("launch-"):
            comments = "\n".join(
                line[1:]
                for line in text.splitlines()
                if line.startswith("# ") and "ServePlan" in line
            )
            assert CJK.search(comments), name


def test_plan_markdown_is_in_chinese(zh_world):
    client, world = zh_world
    url = reverse("planner:plan-export", kwargs={"public_id": world["plan"].public_id, "fmt": "md"})

    text = client.get(url).content.decode()

    assert "## 推荐方案" in text
    assert _english_lines(text) == []


def test_decision_markdown_is_in_chinese(zh_world):
    client, world = zh_world
    url = reverse("decisions:export-markdown", kwargs={"number": world["decision"].number})

    text = client.get(url).content.decode()

    assert CJK.search(text)
    assert _english_lines(text) == []


def test_english_exports_stay_english(client, admin_user):
    world = build_world(admin_user)
    client.force_login(admin_user)
    url = reverse("planner:plan-export", kwargs={"public_id": world["plan"].public_id, "fmt": "md"})

    text = client.get(url).content.decode()

    assert "## Recommendation" in text
    assert not CJK.search(text)
