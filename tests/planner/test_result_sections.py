"""Golden files of every section of the plan result page, in English and in Chinese.

Each saved result below (fixtures of schema version 5, so the engine's later arithmetic does not
move them) is rendered with the result page's template; every top-level section's visible text,
one block per line, is compared with tests/planner/golden/<language>/<plan>/<section>.txt. A
changed template, translation, message or number format shows as a diff of those files.

Regenerate after a deliberate change, then read the diff (docs/i18n.md):

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/planner/test_result_sections.py -n 0
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from planner.engine.result import PlanResult
from planner.presenters import result_context

FIXTURES = Path(__file__).parent / "engine" / "fixtures" / "results"
GOLDEN = Path(__file__).parent / "golden"
PLANS = ("v5_route_a", "v5_route_b", "v5_route_c", "v5_nothing_fits")
LANGUAGES = ("en", "zh-hans")
SECTIONS = (
    "ray",
    "verdict",
    "routes",
    "pit",
    "rec",
    "cand",
    "charts",
    "sig",
    "cfg",
    "assumptions",
)

BLOCKS = {
    "p", "li", "tr", "h1", "h2", "h3", "h4", "dt", "dd", "pre", "summary", "div", "section",
    "article", "table", "thead", "tbody", "ol", "ul", "details", "br",
}  # fmt: skip
CELLS = {"td", "th"}
VOID = {"br", "input", "img", "meta", "link", "hr", "col", "source", "wbr"}


class _Sections(HTMLParser):
    """Split the page into its top-level sections and keep each one's visible text.

    A section is a top-level `<section>` or `<details>` (the two of `div.grid-2` count one by
    one), named after its heading id without "-heading", its data-testid or its first class.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.current: str | None = None
        self.section_depth = 0
        self.lines: dict[str, list[str]] = {}
        self.line = ""
        self.skip = 0

    def _name(self, attrs: dict[str, str | None]) -> str:
        label = attrs.get("aria-labelledby") or ""
        if label:
            return label.removesuffix("-heading")
        # Not the aria-label: it is translated, the file name must not be.
        own = [c for c in (attrs.get("class") or "").split() if c != "card"]
        return attrs.get("data-testid") or (own[0] if own else "")

    def _break(self) -> None:
        text = re.sub(r"\s+", " ", self.line).strip()
        if text and self.current is not None:
            self.lines[self.current].append(text)
        self.line = ""

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attrs_list)
        if tag in ("script", "style"):
            self.skip += 1
        top = self.current is None and tag in ("section", "details")
        if top:
            name = self._name(attrs) or ("assumptions" if tag == "details" else tag)
            self.current, self.section_depth = name, self.depth
            self.lines.setdefault(name, [])
        if tag in BLOCKS:
            self._break()
        elif tag in CELLS:
            self.line += " | "
        if tag not in VOID:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        self.depth -= 1
        if tag in ("script", "style"):
            self.skip -= 1
        if tag in BLOCKS:
            self._break()
        if self.current is not None and self.depth == self.section_depth:
            self._break()
            self.current = None

    def handle_data(self, data: str) -> None:
        if not self.skip and self.current is not None:
            self.line += data


def _sections(html: str) -> dict[str, str]:
    parser = _Sections()
    parser.feed(html)
    parser.close()
    return {name: "\n".join(lines) + "\n" for name, lines in parser.lines.items()}


def _page(plan: str, language: str) -> dict[str, str]:
    saved = json.loads((FIXTURES / f"{plan}.json").read_text(encoding="utf-8"))
    result = PlanResult.from_dict(saved["result"])
    with translation.override(language):
        context = {**result_context(result, engine_input=saved["spec"]), "prefix": ""}
        html = "".join(
            render_to_string(name, context)
            for name in ("planner/partials/result.html", "planner/partials/result_details.html")
        )
    return _sections(html)


def _check(path: Path, text: str) -> None:
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{path} differs; if the change is meant, regenerate with "
        "UPDATE_GOLDEN=1 and review `git diff tests/planner/golden`"
    )


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("plan", PLANS)
def test_every_section_matches_its_golden_file(plan, language):
    sections = _page(plan, language)

    assert set(sections) >= set(SECTIONS)
    for name, text in sections.items():
        _check(GOLDEN / language / plan / f"{name}.txt", text)


def test_sections_split_at_top_level_elements():
    html = (
        '<section aria-labelledby="x-verdict-heading"><h2>Go</h2><p>a <b>b</b></p></section>'
        '<div class="grid-2"><section data-testid="sig"><table><tr><td>1</td><td>2</td></tr>'
        "</table></section></div><details><summary>More</summary><script>no</script></details>"
    )
    assert _sections(html) == {
        "x-verdict": "Go\na b\n",
        "sig": "| 1 | 2\n",
        "assumptions": "More\n",
    }


def test_a_changed_section_fails(tmp_path, monkeypatch):
    monkeypatch.delenv("UPDATE_GOLDEN", raising=False)
    golden = tmp_path / "s.txt"
    golden.write_text("Route A\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="differs"):
        _check(golden, "Route B\n")
