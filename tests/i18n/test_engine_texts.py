"""Every engine text (reason, signal, pitfall, action) reaches the reader through gettext.

The engine returns ids + params + English (planner/engine/texts.py); planner/texts.py holds one
gettext template per id. These tests fail when the two drift apart: a new engine id without a
template, a template whose English no longer matches the engine's, or a placeholder the engine
does not send (the renderer would then silently fall back to English).
"""

from __future__ import annotations

import re
import string

import pytest
from django.utils import translation

from planner import texts as django_texts
from planner.engine import texts as engine_texts

CJK = re.compile(r"[\u4e00-\u9fff]")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _english(lazy: object) -> str:
    with translation.override("en"):
        return str(lazy)


ENGINE_MESSAGES = sorted(engine_texts.TEXTS)
ENGINE_ACTIONS = sorted(engine_texts.ACTIONS)


@pytest.mark.parametrize("msg_id", ENGINE_MESSAGES)
def test_every_engine_message_has_a_translatable_template(msg_id):
    assert msg_id in django_texts.MESSAGES, f"planner/texts.py has no gettext template for {msg_id}"


@pytest.mark.parametrize("msg_id", ENGINE_MESSAGES)
def test_template_english_matches_the_engine(msg_id):
    _rule, english = engine_texts.TEXTS[msg_id]
    assert _english(django_texts.MESSAGES[msg_id]) == english


@pytest.mark.parametrize("msg_id", ENGINE_ACTIONS)
def test_action_english_matches_the_engine(msg_id):
    assert msg_id in django_texts.ACTIONS
    assert _english(django_texts.ACTIONS[msg_id]) == engine_texts.ACTIONS[msg_id]


@pytest.mark.parametrize("msg_id", ENGINE_MESSAGES)
def test_chinese_rendering_uses_the_catalog(msg_id):
    _rule, english = engine_texts.TEXTS[msg_id]
    params = {name: f"<{name}>" for name in _fields(english)}
    with translation.override("zh-hans"):
        text = django_texts.render_text(msg_id, params, english.format(**params))
    assert CJK.search(text), f"{msg_id} is not translated: {text}"
    for value in params.values():
        assert value in text, f"{msg_id}: the translation drops {value}"


@pytest.mark.parametrize("msg_id", ENGINE_ACTIONS)
def test_chinese_action_uses_the_catalog(msg_id):
    english = engine_texts.ACTIONS[msg_id]
    params = {name: f"<{name}>" for name in _fields(english)}
    with translation.override("zh-hans"):
        text = django_texts.render_action(msg_id, params, english.format(**params))
    assert CJK.search(text), f"{msg_id} is not translated: {text}"
    for value in params.values():
        assert value in text
