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


# --- the engine's own English (phrases in params, citations) --------------------------------


def _nodes(hosts, gpu, count, gbps=25, kind="ethernet"):
    return [
        {
            "hostname": h,
            "gpu": gpu,
            "gpu_count": count,
            "intra_link": "nvlink" if count > 1 else "pcie",
            "nics": [{"name": "eth1", "speed_gbps": gbps, "kind": kind, "role": "data"}],
        }
        for h in hosts
    ]


# DOMAIN.md §8 scenarios and a few variations, so that most of the engine's phrases appear.
SCENARIOS = {
    "s1": {
        "model": "llama-3.1-70b",
        "weight_dtype": "int8",
        "max_model_len": 8192,
        "workload": {"concurrency": 32, "avg_input_tokens": 1024, "avg_output_tokens": 256},
        "hardware": {"nodes": _nodes(("n1", "n2"), "a800-80g-sxm", 8)},
    },
    "s2b-64k": {
        "model": "qwen2.5-72b",
        "weight_dtype": "bf16",
        "max_model_len": 65536,
        "rope_scaling_factor": 4.0,
        "workload": {"concurrency": 16, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "hardware": {"nodes": _nodes(("n1", "n2"), "a100-80g-sxm", 4)},
    },
    "s3-shared-ray": {
        "model": "qwen2.5-72b",
        "weight_dtype": "bf16",
        "max_model_len": 65536,
        "rope_scaling_factor": 4.0,
        "workload": {
            "concurrency": 16,
            "traffic_shape": "bursty",
            "ttft_slo_ms": 1,
            "itl_slo_ms": 1,
            "shared_prefixes": True,
        },
        "pinned_layout": {"tp": 8, "pp": 1, "replicas": 1},
        "operations": {"models_change_often": True, "ray_in_use": True},
        "hardware": {"pool_kind": "shared", "nodes": _nodes(("n1", "n2"), "a100-80g-sxm", 4)},
    },
    "s4-one-card": {
        "model": "qwen3-8b",
        "weight_dtype": "bf16",
        "max_model_len": 8192,
        "workload": {"concurrency": 4},
        "hardware": {"nodes": _nodes(("ws",), "rtx-4090", 1, gbps=10)},
    },
    "s5-quantize": {
        "model": "llama-3.1-70b",
        "weight_dtype": "bf16",
        "max_model_len": 8192,
        "workload": {"concurrency": 4},
        "hardware": {"nodes": _nodes(("big",), "a100-80g-sxm", 1)},
    },
    "slow-link": {
        "model": "qwen2.5-72b",
        "weight_dtype": "bf16",
        "max_model_len": 32768,
        "workload": {"concurrency": 64, "traffic_shape": "diurnal"},
        "operations": {"avoid_manual_nccl": True, "gateway_available": True},
        "hardware": {"nodes": _nodes(("n1", "n2", "n3"), "a100-80g-sxm", 4, gbps=1)},
    },
}


def _result(spec: dict):
    from planner.engine import plan, spec_from_dict
    from planner.services.resolve import resolve_spec

    try:
        engine_input = resolve_spec(spec).engine_input
    except Exception:  # noqa: BLE001 - a spec the resolver cannot read is given as is
        engine_input = spec
    return plan(spec_from_dict(engine_input))


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_engine_results_read_in_chinese(name):
    from planner import engine_texts_i18n as i18n
    from tests.i18n.pseudo import english_words

    result = _result(SCENARIOS[name])
    messages = [*result.recommendation.reasons, *result.signals, *result.pitfalls]
    problems = []
    with translation.override("zh-hans"):
        for m in messages:
            rendered = django_texts.render_message(m)
            for text in (rendered.text, rendered.action, i18n.cite(m.rule)):
                if english_words(text):
                    problems.append((m.id, text, english_words(text)))
        for c in result.candidates:
            reason = i18n.phrase(c.rejected_reason)
            if english_words(reason):
                problems.append((c.id, reason, english_words(reason)))
        reason = i18n.phrase(result.placement.single_bundle.reason)
        if english_words(reason):
            problems.append(("placement", reason, english_words(reason)))
    assert problems == []


def test_citations_name_the_source_articles_in_the_readers_language():
    from planner import engine_texts_i18n as i18n

    rule = "§3 Route A (000 §2, 002 §3)"
    with translation.override("zh-hans"):
        assert i18n.sources(rule) == "依据：文章 000 第 2 节、文章 002 第 3 节"
        assert i18n.cite(rule) == "DOMAIN §3 路线 A（依据：文章 000 第 2 节、文章 002 第 3 节）"
        assert i18n.sources("§3, §5 (001)") == "依据：文章 001"
    with translation.override("en"):
        assert i18n.sources(rule) == "sources: article 000 §2, article 002 §3"
        assert i18n.cite(rule) == rule  # English keeps the engine's compact form


def test_missing_action_params_are_read_back_from_the_engine_english():
    from planner import engine_texts_i18n as i18n

    english = "Pin the image tag (vllm/vllm-openai:v0.32.0) on every node."
    assert i18n.recover_params("Pin the image tag ({image}) on every node.", english) == {
        "image": "vllm/vllm-openai:v0.32.0"
    }
    with translation.override("zh-hans"):
        text = django_texts.render_action("pit_pin_versions", {}, english)
    assert "vllm/vllm-openai:v0.32.0" in text
    assert CJK.search(text)


@pytest.mark.django_db
def test_plan_page_cites_source_articles_in_chinese(client, admin_user):
    from django.conf import settings
    from django.urls import reverse

    from tests.i18n.world import build_world

    world = build_world(admin_user)
    client.force_login(admin_user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    html = client.get(
        reverse("planner:plan-detail", kwargs={"public_id": world["plan"].public_id})
    ).content.decode()

    assert "依据：文章 000 第 2 节" in html
    assert "路线 A" in html
