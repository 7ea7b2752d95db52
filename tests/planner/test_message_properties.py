"""Properties of the engine's messages on random plans: each takes exactly its code's
parameters, survives the stored form, and renders in English and Chinese."""

from __future__ import annotations

import json
import re

from django.utils import translation
from hypothesis import HealthCheck, assume, given, settings

from planner.engine import plan, spec_from_dict
from planner.engine.messages import SIGNATURES, Message
from planner.engine.result import PlanResult
from planner.engine.spec import SpecError
from planner.presentation.messages import action, english_text, text
from planner.presentation.templates import TEMPLATES
from tests.planner.engine.test_bundle_properties import valid_specs

CJK = re.compile(r"[\u4e00-\u9fff]")


def _messages(result: PlanResult) -> list[Message]:
    return [
        result.recommendation.summary,
        *result.recommendation.reasons,
        *(s.message for s in result.signals),
        *(p.message for p in result.pitfalls),
        *(c.rejected_reason for c in result.candidates if c.rejected_reason),
        *filter(None, [result.placement.single_bundle.reason]),
    ]


def _nested(m: Message) -> list[Message]:
    inner = [v for v in m.params.values() if isinstance(v, Message)]
    return [m, *(n for i in inner for n in _nested(i))]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_dict=valid_specs())
def test_every_message_of_a_random_plan_reads_back_and_renders(spec_dict):
    try:
        spec = spec_from_dict(spec_dict)
    except SpecError:
        assume(False)  # e.g. a pinned TP that does not divide the heads
    result = plan(spec)
    stored = json.loads(json.dumps(result.to_dict()))

    assert PlanResult.from_dict(stored).to_dict() == stored
    for top in _messages(result):
        for m in _nested(top):
            assert set(m.params) == set(SIGNATURES[m.code])
        assert english_text(top)
        with translation.override("zh-hans"):
            chinese = text(top)
            chinese_action = action(top)
        assert CJK.search(chinese), (top.code, chinese)
        assert bool(chinese_action) == bool(TEMPLATES[top.code].action)
