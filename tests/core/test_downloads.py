"""Issue 33 "also": downloads name their file so that every browser decodes it (RFC 6266)."""

from urllib.parse import unquote

import pytest

from core.downloads import attachment
from tests.decisions.conftest import make_decision


def _filename_star(header: str) -> str:
    value = header.split("filename*=", 1)[1].split(";", 1)[0]
    charset, _language, encoded = value.split("'", 2)
    assert charset == "UTF-8"
    return unquote(encoded, encoding="utf-8")


def test_an_ascii_name_is_a_plain_quoted_filename():
    assert attachment("serveplan-audit.csv") == 'attachment; filename="serveplan-audit.csv"'


@pytest.mark.parametrize("name", ["0001-保持-mp.md", "0002-café.md", 'a"b\\c/d-名.md'])
def test_a_non_ascii_name_travels_in_filename_star_with_an_ascii_fallback(name):
    header = attachment(name)

    assert header.isascii()
    assert _filename_star(header) == name
    fallback = header.split('filename="', 1)[1].split('"', 1)[0]
    assert fallback.isascii()
    assert not set('"\\/') & set(fallback)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url", ["/decisions/{n}/export.md", "/api/v1/decisions/{n}/export/"], ids=["page", "api"]
)
def test_a_decision_titled_in_chinese_downloads_under_its_title(planner_client, planner, url):
    decision = make_decision(planner, title="保持 mp 在专用节点上")

    response = planner_client.get(url.format(n=decision.number))

    assert response.status_code == 200
    header = response["Content-Disposition"]
    assert header.isascii()
    assert _filename_star(header) == "0001-保持-mp-在专用节点上.md"
