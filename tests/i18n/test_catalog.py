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


def incomplete_entries(catalog: polib.POFile) -> dict[str, list[str]]:
    """Return the untranslated, fuzzy and half-translated plural msgids of `catalog`."""
    live = [e for e in catalog if not e.obsolete]
    return {
        "untranslated": [e.msgid for e in live if not e.translated() and not e.fuzzy],
        "fuzzy": [e.msgid for e in live if e.fuzzy],
        "empty plural": [e.msgid for e in live if e.msgid_plural and not all(_translations(e))],
    }


def placeholder_problems(catalog: polib.POFile) -> list[tuple[str, str]]:
    """Return (msgid, msgstr) pairs whose placeholders differ from the msgid's."""
    problems = []
    for entry in catalog:
        if entry.obsolete:
            continue
        for translated in _translations(entry):
            if not translated:
                continue
            if "python-format" in entry.flags or "%(" in entry.msgid:
                source = entry.msgid_plural or entry.msgid
                want = _PERCENT.findall(source)
                got = _PERCENT.findall(translated)
                if entry.msgid_plural:
                    # One Chinese form serves every count: it may drop a bare %d, never a name.
                    want = [p for p in want if "(" in p or p == "%%"]
                    got = [p for p in got if "(" in p or p == "%%"]
                if sorted(want) != sorted(got):
                    problems.append((entry.msgid, translated))
            braces = "python-brace-format" in entry.flags or _BRACE.search(entry.msgid)
            if braces and sorted(_BRACE.findall(entry.msgid)) != sorted(_BRACE.findall(translated)):
                problems.append((entry.msgid, translated))
    return problems


def test_every_entry_is_translated_and_none_is_fuzzy():
    found = incomplete_entries(_catalog())

    assert found == {"untranslated": [], "fuzzy": [], "empty plural": []}, (
        "translate these in locale/zh_Hans/LC_MESSAGES/django.po (and drop the fuzzy flag)"
    )


def test_placeholders_are_kept_exactly():
    assert placeholder_problems(_catalog()) == []


def test_the_checks_catch_a_bad_catalog():
    bad = polib.POFile()
    bad.append(polib.POEntry(msgid="Plan", msgstr=""))
    bad.append(polib.POEntry(msgid="Old", msgstr="旧", flags=["fuzzy"]))
    bad.append(polib.POEntry(msgid="Hi %(name)s", msgstr="你好 %(nom)s", flags=["python-format"]))
    bad.append(polib.POEntry(msgid="{n} nodes", msgstr="n 个节点", flags=["python-brace-format"]))
    bad.append(polib.POEntry(msgid="Saved: %s", msgstr="已保存", flags=["python-format"]))

    found = incomplete_entries(bad)

    assert found["untranslated"] == ["Plan"]
    assert found["fuzzy"] == ["Old"]
    assert [msgid for msgid, _ in placeholder_problems(bad)] == [
        "Hi %(name)s",
        "{n} nodes",
        "Saved: %s",
    ]


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


def test_catalog_passes_msgfmt_check():
    """Django's compilemessages runs `msgfmt --check-format`: a msgstr that breaks a placeholder
    of its msgid (including a "%" that xgettext took for python-format) makes it refuse the
    whole catalog."""
    import subprocess

    if shutil.which("msgfmt") is None:
        pytest.fail("GNU gettext (msgfmt) is not installed: apt-get install gettext.")
    check = subprocess.run(
        ["msgfmt", "--check", "--output-file=/dev/null", str(CATALOG)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr


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
