"""Django-side rendering of engine messages through gettext."""

from django.utils import translation

from planner.engine.texts import ACTIONS as ENGINE_ACTIONS
from planner.engine.texts import TEXTS as ENGINE_TEXTS
from planner.engine.texts import Message, message
from planner.texts import ACTIONS, MESSAGES, RULES, render_message, rule_refs


def test_every_engine_text_has_a_translatable_template():
    assert set(MESSAGES) >= set(ENGINE_TEXTS)
    assert set(ACTIONS) >= set(ENGINE_ACTIONS)


def test_templates_are_the_engine_english():
    drift = [k for k, (_rule, text) in ENGINE_TEXTS.items() if str(MESSAGES[k]) != text]
    assert drift == [], "update planner/texts.py (and the catalogs) for: " + ", ".join(drift)


def test_render_uses_params_and_falls_back_to_the_engine_text():
    msg = message("pit_nccl_roce_gid", nic="ib0")
    assert render_message(msg).text == "RoCE data NIC ib0: NCCL needs the RoCE v2 GID."
    unknown = Message(id="brand_new", rule="§9", params={}, text="Engine English.")
    assert render_message(unknown).text == "Engine English."
    with translation.override("zh-hans"):
        broken = Message(id="pit_nccl_roce_gid", rule="§6", params={}, text="fallback")
        assert render_message(broken).text == "fallback"  # missing params: engine text


def test_rules_are_linked_by_anchor():
    refs = rule_refs("§2, §3 Route B (000 §2.2, 002 §5)")
    assert [r.anchor for r in refs] == ["rule-2", "rule-3-route-b"]
    assert all(r.anchor in RULES and r.text for r in refs)
    assert rule_refs("§4 (000 §3)")[0].label == "§4"
