"""The result contract: every saved shape of every earlier engine version reads back, typed."""

import json
from pathlib import Path

import pytest

from planner.engine import plan, spec_from_dict
from planner.engine.assumptions import Assumptions
from planner.engine.messages import SIGNATURES, Code, MessageError, Term, legacy, message
from planner.engine.result import (
    SCHEMA_VERSION,
    Backend,
    CandidateKind,
    PlanResult,
    ResultFormatError,
    Route,
    Severity,
    layout_label,
)

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "results").glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _pitfall_key(p):
    """Return a pitfall's code, or the English of one an earlier engine saved incompletely."""
    if p.code == Code.LEGACY_PITFALL:
        return p.message.params["text"]
    return p.code.value


def _stored_pitfall_key(p):
    if "message" in p:  # version 5 on: a code with parameters
        return p["message"]["code"]
    # Before: an id with parameters and English; the action's own parameters (the image tag)
    # were not stored, so such pitfalls read back as the English they were.
    missing = set(SIGNATURES[Code(p["id"])]) - set(p.get("params") or {})
    return p["text"] if missing else p["id"]


def test_there_are_fixtures_of_every_schema_version():
    versions = {p.name.split("_")[0].split("-")[0] for p in FIXTURES}
    assert versions == {f"v{n}" for n in range(1, SCHEMA_VERSION + 1)}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_saved_fixture_reads_typed_and_round_trips(path):
    stored = _load(path)["result"]

    result = PlanResult.from_dict(stored)

    rec = stored["recommendation"]
    assert result.schema_version == SCHEMA_VERSION
    assert result.recommendation.route is Route(rec["route"])
    assert isinstance(result.recommendation.executor_backend, Backend)
    assert result.recommendation.label == layout_label(rec["tp"], rec["pp"], rec["replicas"])
    assert result.best is not None
    assert result.best.id == rec["candidate_id"]
    assert all(isinstance(c.kind, CandidateKind) for c in result.candidates)
    assert all(isinstance(p.severity, Severity) for p in result.pitfalls)
    assert [_pitfall_key(p) for p in result.pitfalls] == [
        _stored_pitfall_key(p) for p in stored["pitfalls"]
    ]
    assert result.hosts == tuple(stored["node_selection"]["hosts"])
    again = PlanResult.from_dict(result.to_dict())
    assert again.to_dict() == result.to_dict()


@pytest.mark.parametrize(
    "path", [p for p in FIXTURES if p.name.startswith(f"v{SCHEMA_VERSION}_")], ids=str
)
def test_current_shape_is_stored_unchanged(path):
    stored = _load(path)["result"]

    assert PlanResult.from_dict(stored).to_dict() == stored, (
        "The stored shape changed: give a new field a default, or bump SCHEMA_VERSION in "
        "planner/engine/result.py with an upgrade step and add fixtures of the new version."
    )


def test_first_engine_release_lacked_pp_comm():
    stored = _load(next(p for p in FIXTURES if p.name == "v1-06fb8a4_route_b.json"))["result"]
    assert "pp_comm_per_decode_step_ms" not in stored["candidates"][0]

    assert PlanResult.from_dict(stored).candidates[0].pp_comm_per_decode_step_ms == 0.0


def test_the_engine_writes_the_current_version(s1_spec):
    result = plan(spec_from_dict(s1_spec))
    stored = json.loads(json.dumps(result.to_dict()))

    assert stored["schema_version"] == SCHEMA_VERSION
    assert PlanResult.from_dict(stored).to_dict() == stored
    best = result.best
    assert vars(result)["best"] is best  # computed once, then cached on the result


def test_a_legacy_snapshot_with_missing_sections_still_reads():
    result = PlanResult.from_dict({"recommendation": {"route": "A", "tp": 2}})

    assert result.recommendation.route is Route.A
    rec = result.recommendation
    assert (rec.tp, rec.pp, rec.replicas) == (2, 0, 0)  # absent counts read as 0
    assert result.best is None
    assert result.candidates == ()
    assert result.hosts == ()


def test_a_newer_schema_is_refused():
    with pytest.raises(ResultFormatError, match="schema_version"):
        PlanResult.from_dict({"schema_version": SCHEMA_VERSION + 1})


def test_a_wrong_value_names_its_field():
    stored = _load(FIXTURES[-1])["result"]
    broken = {**stored, "pitfalls": [{**stored["pitfalls"][0], "severity": "dire"}]}

    with pytest.raises(ResultFormatError, match=r"pitfalls\.0\.severity"):
        PlanResult.from_dict(broken)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_applied_assumptions_keep_the_stored_constants_the_engine_knows(path):
    stored = _load(path)["result"].get("assumptions", {})

    applied = PlanResult.from_dict(_load(path)["result"]).applied_assumptions.to_dict()

    known = {k: v for k, v in stored.items() if k in applied}
    assert known
    assert all(applied[k] == v for k, v in known.items())
    assert set(applied) == set(Assumptions().to_dict())  # dropped constants are left out


def _old(name: str) -> dict:
    return _load(next(p for p in FIXTURES if p.name == name))["result"]


def test_messages_of_version_3_read_as_codes_with_typed_parameters():
    stored = _old("v3_route_c.json")
    result = PlanResult.from_dict(stored)
    reasons = {m.code: m for m in result.recommendation.reasons}

    # The ids of the signals that hit were a comma-separated string: now codes.
    ray = reasons[Code.RAY_ROUTE_C]
    assert ray.params["signals"] == (
        Code.SIG_MULTI_MODEL_POOL,
        Code.SIG_TRAFFIC_SWINGS,
        Code.SIG_RAY_IN_USE,
    )
    # An English phrase inside a message (the why of the backend) is kept as it was written.
    why = reasons[Code.EXECUTOR_BACKEND].params["why"]
    assert why == legacy("Ray Serve deployments run on a Ray cluster")
    # Words become terms; the recommendation's summary is the English it was.
    assert result.signals[2].message.params["shape"] is Term.BURSTY
    assert result.recommendation.summary == legacy(stored["recommendation"]["summary"])


def test_rejected_reasons_of_earlier_versions_are_kept_as_english():
    stored = _old("v3_nothing_fits.json")
    result = PlanResult.from_dict(stored)

    for old, new in zip(stored["candidates"], result.candidates, strict=True):
        if old["rejected_reason"]:
            assert new.rejected_reason == legacy(old["rejected_reason"])
        else:
            assert new.rejected_reason is None


def test_the_engine_emits_rejected_reasons_as_codes():
    stored = _old("v5_nothing_fits.json")
    reasons = {c["rejected_reason"]["code"] for c in stored["candidates"]}
    assert reasons <= {Code.REJECT_MEMORY, Code.REJECT_KV, Code.REJECT_ROOM}


def test_a_message_takes_exactly_the_parameters_of_its_code():
    with pytest.raises(MessageError, match="missing parameters \\['max_model_len'\\]"):
        message(Code.NOTHING_FITS)
    with pytest.raises(MessageError, match="unexpected \\['colour'\\]"):
        message(Code.SGLANG_PREFIX, colour="red")


def test_an_unknown_stored_code_names_the_field():
    stored = _old("v5_route_a.json")
    broken = {
        **stored,
        "recommendation": {
            **stored["recommendation"],
            "reasons": [{"code": "no_such_code", "params": {}}],
        },
    }
    with pytest.raises(ResultFormatError, match=r"recommendation\.reasons\.0.*no_such_code"):
        PlanResult.from_dict(broken)
