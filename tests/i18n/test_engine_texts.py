"""Every engine message reaches the reader through gettext, from one template per code.

The engine returns codes with typed parameters (planner/engine/messages.py); each code has one
English template in planner/presentation/templates.py, marked with N_() for extraction. These
tests fail when a template is missing from the catalog or untranslated, when its English is
written anywhere else too, or when a translation drops a value the engine sends.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils import translation

from planner.engine.messages import SIGNATURES, Code, Term, message
from planner.presentation.messages import action, citation, text
from planner.presentation.references import RULE_REFERENCES
from planner.presentation.rules import citation_text, sources_text
from planner.presentation.template_types import Rule
from planner.presentation.templates import TEMPLATES, TERM_CONTEXT, TERMS

CJK = re.compile(r"[\u4e00-\u9fff]")
CATALOG = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
TRANSLATED = [c for c in Code if TEMPLATES[c].translated]


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _catalog() -> dict[tuple[str | None, str], str]:
    return {
        (e.msgctxt, e.msgid): e.msgstr or e.msgstr_plural.get(0, "")  # a plural entry: its form
        for e in polib.pofile(str(CATALOG))
        if not e.obsolete
    }


def _templates() -> list[str]:
    return [
        s
        for c in TRANSLATED
        for s in (TEMPLATES[c].text, TEMPLATES[c].action, TEMPLATES[c].name)
        if s
    ]


def test_every_template_and_word_has_a_translation_in_the_catalog():
    catalog = _catalog()
    missing = [t for t in _templates() if not catalog.get((None, t))]
    missing += [w for w in TERMS.values() if not catalog.get((TERM_CONTEXT, w))]
    assert missing == []


def test_each_template_is_written_once():
    """No second copy of an engine template anywhere in the code (the engine, a Django-side
    table of the same English, a parser of it): the catalog entry is the only other copy."""
    root = Path(settings.BASE_DIR)
    # The table itself, split by topic (templates_reasons.py, templates_signals.py, ...).
    own = set((root / "planner" / "presentation").glob("templates*.py"))
    sources = {
        p: p.read_text(encoding="utf-8")
        for p in (*root.glob("*/**/*.py"), *root.glob("templates/**/*.html"))
        if p not in own and ".venv" not in p.parts and "tests" not in p.parts
    }
    long_ones = [t for t in _templates() if len(t) > 40]
    copies = [
        (t[:50], str(p.relative_to(root)))
        for t in long_ones
        for p, code in sources.items()
        if t[:40] in code
    ]
    assert copies == []


def _sample(code: Code) -> dict:
    return {name: f"<{name}>" for name in SIGNATURES[code]}


@pytest.mark.parametrize("code", TRANSLATED)
def test_chinese_rendering_uses_the_catalog(code):
    params = _sample(code)
    sample = message(code, **params)
    with translation.override("zh-hans"):
        rendered = {TEMPLATES[code].text: text(sample), TEMPLATES[code].action: action(sample)}
    for template, out in rendered.items():
        if not template:
            continue
        assert CJK.search(out), f"{code} is not translated: {out}"
        for name in _fields(template):
            assert params[name] in out, f"{code}: the translation drops {{{name}}}"


def test_words_are_translated_with_their_context():
    with translation.override("zh-hans"):
        shape = text(message(Code.WHY_TRAFFIC_IS, shape=Term.DIURNAL))
    assert "day/night" not in shape
    assert CJK.search(shape)


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
    from tests.i18n.pseudo import english_words

    result = _result(SCENARIOS[name])
    messages = [
        result.recommendation.summary,
        *result.recommendation.reasons,
        *(s.message for s in result.signals),
        *(p.message for p in result.pitfalls),
        *(c.rejected_reason for c in result.candidates if c.rejected_reason),
        *filter(None, [result.placement.single_bundle.reason]),
    ]
    problems = []
    with translation.override("zh-hans"):
        for m in messages:
            for rendered in (text(m), action(m), citation(m)):
                if english_words(rendered):
                    problems.append((m.code, rendered, english_words(rendered)))
    assert problems == []


def test_citations_name_public_pages_in_the_readers_language():
    # A citation names what a reader can open (public documentation and papers), never the
    # project's own notes ("DOMAIN §3", "article 000 §2", "issue 13").
    rules = (Rule.ROUTE_A,)
    with translation.override("zh-hans"):
        cited = citation_text(rules)
        assert cited == (
            "参见路线 A：副本各在节点内：https://docs.vllm.ai/en/latest/serving/parallelism_scaling/"
            "、https://nginx.org/en/docs/http/ngx_http_upstream_module.html"
        )
    with translation.override("en"):
        cited = citation_text(rules)
        assert cited.startswith("see Route A: replicas inside nodes: https://docs.vllm.ai/")
        assert sources_text(rules).count("https://") == 2
        assert {r.url for r in RULE_REFERENCES[Rule.ROUTE_A]} <= set(
            cited.split(": ")[-1].split(", ")
        )
    for text_ in (cited, sources_text(rules)):
        assert not re.search(r"DOMAIN|article \d|issue \d+|文章 \d", text_)


@pytest.mark.django_db
def test_plan_page_cites_source_articles_in_chinese(client, admin_user):
    from django.conf import settings
    from django.urls import reverse

    from tests.i18n.world import build_world

    world = build_world(admin_user)
    client.force_login(admin_user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    # The locale middleware leaves the request's language active in this thread: give the
    # tests that follow back the language they had.
    with translation.override(translation.get_language()):
        html = client.get(
            reverse("planner:plan-detail", kwargs={"public_id": world["plan"].public_id})
        ).content.decode()

    assert "docs.vllm.ai" in html  # the public pages behind the rules
    assert "文章 000" not in html
    assert "DOMAIN §" not in html
    assert "路线 A" in html


def test_the_template_tables_share_no_code():
    """TEMPLATES merges the topic tables: a code in two of them would silently take one text."""
    from planner.presentation.templates_phrases import PHRASE_TEMPLATES
    from planner.presentation.templates_reasons import REASON_TEMPLATES
    from planner.presentation.templates_signals import SIGNAL_AND_PITFALL_TEMPLATES

    tables = (REASON_TEMPLATES, SIGNAL_AND_PITFALL_TEMPLATES, PHRASE_TEMPLATES)
    assert sum(len(t) for t in tables) == len(TEMPLATES)
