"""The verdict on top of a plan: route, layout, three sentences with numbers, SLO pass/fail."""

import json
from pathlib import Path

import pytest
from django.utils import translation

from planner.engine.result import PlanResult
from planner.presentation.pitfalls import relevant_pitfalls
from planner.presentation.verdict import plan_verdict, recommendation_sentence

FIXTURES = Path(__file__).parent / "engine" / "fixtures" / "results"


def _saved(name: str) -> tuple[dict, PlanResult]:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data["spec"], PlanResult.from_dict(data["result"])


def test_route_a_verdict_says_fit_speed_and_what_the_team_runs():
    spec, result = _saved("v2_route_a.json")

    with translation.override("en"):
        verdict = plan_verdict(result, spec)

    assert verdict.title.startswith("Route A")
    assert verdict.layout == "TP8×PP1×2"
    assert len(verdict.sentences) == 3
    fit, speed, ops = verdict.sentences
    assert "fits inside one node" in fit
    assert "output tokens/s" in speed
    assert "nginx" in ops
    assert verdict.slo_checks == ()
    assert verdict.slo_met is None


def test_entered_slos_are_shown_as_met_or_missed():
    spec, result = _saved("v2_route_b.json")  # TTFT 2000 ms and ITL 50 ms entered

    with translation.override("en"):
        verdict = plan_verdict(result, spec)

    assert [c.target_ms for c in verdict.slo_checks] == ["2,000", "50"]
    best = result.best
    assert verdict.slo_checks[0].met == (best.serving.ttft_p95_ms <= 2000)
    assert verdict.slo_checks[1].met == (best.serving.itl_p95_ms <= 50)
    assert "spans 2 nodes" in verdict.sentences[0]


def test_counts_are_whole_and_grouped_for_the_locale():
    spec, result = _saved("v2_route_a.json")

    with translation.override("en"):
        fit = plan_verdict(result, spec).sentences[0]

    seqs = int(result.best.max_concurrency_per_replica)
    assert f"room for {seqs:,} sequences of 8,192 tokens" in fit
    assert ".0 sequences" not in fit


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_nothing_fits_says_so_in_every_language(language):
    spec, result = _saved("v2_nothing_fits.json")

    with translation.override(language):
        verdict = plan_verdict(result, spec)

    assert not verdict.fits
    assert verdict.layout == ""
    assert "131072" in verdict.sentences[0].replace(",", "")
    if language == "en":
        assert "131,072 tokens" in verdict.sentences[0]
    # The recommendation card says the same, not "serve it as TP1×PP1×1" with absurd figures.
    with translation.override(language):
        sentence = recommendation_sentence(result)
    assert sentence == verdict.sentences[0]
    assert result.recommendation.label not in sentence


def test_nccl_pitfalls_only_when_a_replica_spans_nodes():
    _spec, route_a = _saved("v2_route_a.json")  # 2 replicas, each inside one node
    _spec, route_b = _saved("v2_route_b.json")  # one replica across 2 nodes

    assert any(p.code.startswith("pit_nccl") for p in route_a.pitfalls)
    assert not any(p.code.startswith("pit_nccl") for p in relevant_pitfalls(route_a))
    assert any(p.code.startswith("pit_nccl") for p in relevant_pitfalls(route_b))


@pytest.mark.parametrize(
    ("name", "chosen"),
    [("v2_route_a.json", "A"), ("v2_route_b.json", "B"), ("v2_route_c.json", "C")],
)
def test_three_routes_side_by_side_with_one_chosen(name, chosen):
    from planner.presentation.routes import route_options

    _spec, result = _saved(name)

    with translation.override("en"):
        options = route_options(result)

    assert len(options) == 3
    assert [o.route for o in options if o.chosen] == [chosen]
    assert {o.route for o in options} >= {"B", "C"}
    for o in options:
        assert all((o.verdict, o.burden, o.changes_choice))
        # A route's layout shows the serving model's speed when it was simulated, "—" when
        # it was only ranked (an older plan simulated the recommendation alone).
        simulated = any(c.label == o.layout and c.serving for c in result.candidates)
        if o.layout and simulated:
            assert "tok/s" in o.throughput
        elif o.layout:
            assert o.throughput == "—"
    if chosen == "A":
        across = next(o for o in options if o.route == "B")
        assert across.verdict.startswith(("Not needed", "Possible", "Not possible"))
        ray = next(o for o in options if o.route == "C")
        assert ray.verdict.startswith("Not recommended")


def test_reasons_cite_their_sources_as_footnotes():
    from planner.presentation.footnotes import footnoted
    from planner.presentation.messages import shown_all

    _spec, result = _saved("v2_route_b.json")

    with translation.override("en"):
        reasons, sources = footnoted(shown_all(result.recommendation.reasons))

    assert sources
    assert [s.number for s in sources] == list(range(1, len(sources) + 1))
    assert all("§" not in r.text for r in reasons)
    cited = {n for r in reasons for n in r.numbers}
    assert cited == {s.number for s in sources}
    # Sources a reader can open: public documentation pages and papers, never project notes.
    assert all(r.url.startswith("https://") for s in sources for r in s.refs)
    assert any("docs.vllm.ai" in r.url for s in sources for r in s.refs)
    assert all("DOMAIN" not in s.heading and "§" not in s.heading for s in sources)


def test_assumptions_are_a_table_with_units_and_effects():
    from planner.presentation.assumptions import assumption_rows

    _spec, result = _saved("v2_route_a.json")

    with translation.override("en"):
        rows = {r.name: r for r in assumption_rows(result.assumptions)}

    assert rows["cold_start_gbs"].unit == "GB/s"
    assert rows["latency_ethernet_us"].unit == "µs"
    assert rows["hbm_efficiency"].unit == "share of peak (0–1)"
    assert rows["block_size_tokens"].unit == "tokens"
    assert rows["flashinfer_sampler"].value in ("yes", "no")
    assert rows["block_size_tokens"].effect.startswith("Memory per GPU")
    assert rows["ethernet_efficiency"].effect.startswith("Communication")
    assert rows["decode_mfu"].effect.startswith("Speed")


@pytest.mark.django_db
def test_the_recommended_route_shows_the_recommended_layout_not_the_top_score(demo_fleet):
    """A small model on one 8-GPU node: the engine prefers TP2 replicas to the higher-scoring
    TP4 ones; the route marked "Recommended" shows that layout and its figures."""
    from planner.presentation.routes import route_options
    from planner.services import plan_evaluate

    result = plan_evaluate(
        spec={
            "model": "llama-3.1-8b",
            "max_model_len": 8192,
            # 128 clients (64 until issue 32's load terms, where TP8 now ranks first too).
            "workload": {"concurrency": 128, "avg_input_tokens": 1024, "avg_output_tokens": 256},
            "hardware": {"hostnames": ["a800-01"]},
        }
    ).result
    best = result.best
    assert best.score < max(c.score for c in result.candidates if c.fits)  # the case at hand

    with translation.override("en"):
        chosen = next(o for o in route_options(result) if o.chosen)

    assert chosen.layout == result.recommendation.label == best.label
    assert chosen.verdict == "Recommended."


def test_a_summary_saved_in_english_is_rebuilt_from_the_plans_figures():
    spec, result = _saved("v3_route_a.json")  # stored its summary as an English sentence
    assert result.recommendation.summary.code == "legacy"

    with translation.override("zh-hans"):
        rebuilt = recommendation_sentence(result, spec)
        as_saved = recommendation_sentence(result)
    assert "路线 A" in rebuilt
    assert result.model.name in rebuilt
    assert as_saved == result.recommendation.summary.params["text"]  # no input: as it was
    with translation.override("en"):
        english = recommendation_sentence(result, spec)
    assert english.startswith("Route A: serve")
    assert f"at {spec['workload']['concurrency']} concurrent" in english
