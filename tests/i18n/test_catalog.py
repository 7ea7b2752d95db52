"""The zh_Hans catalog is complete, keeps every placeholder and is up to date with the code."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

CATALOG = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
# Where makemessages looks (the same arguments as the documented workflow, docs/i18n.md).
IGNORED = (".venv", "var", "tests", ".git", "node_modules")
SOURCE_SUFFIXES = {".py", ".html", ".txt", ".md", ".js"}

_PERCENT = re.compile(r"%(?:\([A-Za-z_]\w*\))?[#0 +-]*\d*(?:\.\d+)?[sdifrxXeEgGc%]")
_BRACE = re.compile(r"\{[A-Za-z_]\w*(?:[.\[][^}]*)?(?:![rsa])?(?::[^}]*)?\}")


def _catalog() -> polib.POFile:
    return polib.pofile(str(CATALOG))


def _translations(entry: polib.POEntry) -> list[str]:
    if entry.msgid_plural:
        return [entry.msgstr_plural[k] for k in sorted(entry.msgstr_plural)]
    return [entry.msgstr]


def test_catalog_exists_and_is_for_simplified_chinese():
    catalog = _catalog()

    assert catalog.metadata.get("Language") == "zh_Hans"
    assert catalog.metadata.get("Plural-Forms", "").startswith("nplurals=1;")
    assert not catalog.metadata_is_fuzzy


def test_every_entry_is_translated_and_none_is_fuzzy():
    catalog = _catalog()
    untranslated = [e.msgid for e in catalog.untranslated_entries() if not e.obsolete]
    fuzzy = [e.msgid for e in catalog.fuzzy_entries() if not e.obsolete]
    empty_plural = [
        e.msgid for e in catalog if e.msgid_plural and not all(_translations(e)) and not e.obsolete
    ]

    assert untranslated == [], f"{len(untranslated)} untranslated: {untranslated[:20]}"
    assert fuzzy == [], f"{len(fuzzy)} fuzzy (re-translate, then drop the flag): {fuzzy[:20]}"
    assert empty_plural == []


def test_placeholders_are_kept_exactly():
    problems = []
    for entry in _catalog():
        if entry.obsolete:
            continue
        for translated in _translations(entry):
            if "python-format" in entry.flags:
                source = entry.msgid_plural or entry.msgid
                # %(name)s placeholders must match; a singular may drop a bare %d count.
                want = sorted(p for p in _PERCENT.findall(source) if "(" in p or p == "%%")
                got = sorted(p for p in _PERCENT.findall(translated) if "(" in p or p == "%%")
                if want != got:
                    problems.append((entry.msgid, translated))
            braces = "python-brace-format" in entry.flags or _BRACE.search(entry.msgid)
            if braces and sorted(_BRACE.findall(entry.msgid)) != sorted(_BRACE.findall(translated)):
                problems.append((entry.msgid, translated))
    assert problems == []


def test_markup_in_translations_matches_the_source():
    """Tags such as <code> and <a href="%(url)s"> survive translation, in the same number."""
    tag = re.compile(r"</?[a-z]+[^>]*>")
    problems = [
        (e.msgid, e.msgstr)
        for e in _catalog()
        if not e.obsolete and sorted(tag.findall(e.msgid)) != sorted(tag.findall(e.msgstr))
    ]
    assert problems == []


def _copy_sources(dest: Path) -> None:
    root = Path(settings.BASE_DIR)
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts and rel.parts[0] in IGNORED:
            continue
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    shutil.copytree(root / "locale", dest / "locale")


def test_catalog_is_up_to_date_with_the_code(tmp_path, monkeypatch):
    if shutil.which("xgettext") is None or shutil.which("msgmerge") is None:
        pytest.fail(
            "GNU gettext (xgettext, msgmerge) is not installed, so the catalog cannot be "
            "checked against the code: install it (apt-get install gettext)."
        )
    work = tmp_path / "src"
    _copy_sources(work)
    monkeypatch.chdir(work)
    with override_settings(LOCALE_PATHS=[work / "locale"]):
        call_command(
            "makemessages",
            locale=["zh_Hans"],
            ignore_patterns=list(IGNORED),
            verbosity=0,
        )
    fresh = polib.pofile(str(work / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"))
    committed = {(e.msgctxt, e.msgid) for e in _catalog() if not e.obsolete}
    missing = sorted(
        e.msgid for e in fresh if not e.obsolete and (e.msgctxt, e.msgid) not in committed
    )
    assert missing == [], (
        f"{len(missing)} strings in the code are missing from the catalog; run "
        f"`manage.py makemessages -l zh_Hans --ignore=.venv --ignore=var --ignore=tests` and "
        f"translate them: {missing[:30]}"
    )


GETTEXT_NAMES = {
    "_", "gettext", "gettext_lazy", "ngettext", "ngettext_lazy", "pgettext", "pgettext_lazy",
    "npgettext", "gettext_noop",
}  # fmt: skip


def test_no_gettext_call_hides_inside_an_f_string():
    """xgettext (GNU gettext 0.21, as in CI) skips calls inside f-strings: the msgid is never
    extracted, so the text stays English in every language. Concatenate instead."""
    import ast

    root = Path(settings.BASE_DIR)
    hidden = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in IGNORED or rel.parts[:2] == ("planner", "engine"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.JoinedStr):
                continue
            for inner in ast.walk(node):
                func = getattr(inner, "func", None)
                name = getattr(func, "id", None) or getattr(func, "attr", None)
                if isinstance(inner, ast.Call) and name in GETTEXT_NAMES:
                    hidden.append(f"{rel}:{inner.lineno}")
    assert hidden == [], f"gettext calls inside f-strings (not extracted): {hidden}"
