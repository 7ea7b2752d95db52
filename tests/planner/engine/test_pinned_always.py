"""A pinned layout is always in the result, and a layout that never starts has no speeds
(issue 32)."""

import json

import pytest

from planner.engine import plan, spec_from_dict
from planner.engine.messages import Code
from planner.engine.result import SPEED_FIELDS, PlanResult


def _shared(free, *, tp, replicas=1, model="llama-3.1-8b", gpu="a100-80g-sxm"):
    return spec_from_dict(
        {
            "model": model,
            "max_model_len": 8192,
            "workload": {"concurrency": 8, "avg_input_tokens": 512, "avg_output_tokens": 128},
            "pinned_layout": {"tp": tp, "pp": 1, "replicas": replicas},
            "hardware": {
                "pool_kind": "shared",
                "nodes": [
                    {"hostname": f"gpu-{i}", "gpu": gpu, "gpu_count": 4, "free_gpus": f}
                    for i, f in enumerate(free)
                ],
            },
        }
    )


def test_a_pin_no_node_has_room_for_stays_in_the_result_with_why_and_what_would_place_it():
    # Three 4-GPU nodes with 3, 3 and 2 GPUs free: TP4 fits none (it used to vanish: null).
    result = plan(_shared([3, 3, 2], tp=4))
    pin = result.pinned
    assert pin is not None
    assert not pin.placeable
    assert not pin.fits
    assert pin.hosts == ()
    assert pin.placement_reason.code is Code.PIN_NO_ROOM
    assert pin.placement_reason.params == {"gpus": 4, "nodes": 1, "with_room": 0, "most_free": 3}
    assert pin.placement_hint.code is Code.PIN_FREE_GPUS
    assert pin.placement_hint.params == {"gpus": 1, "hosts": "gpu-0"}
    # Its memory fits: it says what it would deliver once placed.
    assert pin.ttft_ms > 0
    assert pin.output_throughput_tok_s > 0
    verdict = next(r for r in result.recommendation.reasons if r.code is Code.PINNED_LAYOUT)
    assert verdict.params["verdict"].code is Code.PINNED_NOT_PLACEABLE


def test_a_pin_with_fewer_replicas_placed_than_pinned_says_what_would_place_the_rest():
    # TP2 ×4 on 3, 3 and 2 free GPUs: three replicas have room; one GPU more on a node with 3
    # free holds the fourth.
    pin = plan(_shared([3, 3, 2], tp=2, replicas=4)).pinned
    assert not pin.placeable
    assert pin.rejected_reason.code is Code.REJECT_ROOM
    assert pin.placement_hint.code is Code.PIN_FREE_GPUS
    assert pin.placement_hint.params["gpus"] == 1


def test_a_pin_that_freeing_gpus_cannot_place_asks_for_nodes():
    from planner.engine.layouts import group_nodes
    from planner.engine.pinned import _why_not_placed
    from planner.engine.spec import Layout

    group = group_nodes(_shared([3, 3, 2], tp=4).hardware.nodes)[0]
    # Four TP4 replicas on three 4-GPU nodes: freeing every GPU holds three.
    _, hint = _why_not_placed(group, Layout(tp=4, pp=1, replicas=4))
    assert hint.code is Code.PIN_NEEDS_NODES
    assert hint.params == {"gpus": 4, "nodes": 1}


def test_a_placeable_pin_carries_no_placement_notes():
    pin = plan(_shared([4, 3, 2], tp=4)).pinned
    assert pin.placeable
    assert pin.fits
    assert pin.placement_reason is None
    assert pin.placement_hint is None


def test_a_layout_that_does_not_fit_has_no_speeds_and_a_reason():
    spec = spec_from_dict(
        {
            "model": "llama-3.1-70b",
            "workload": {"concurrency": 8},
            "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 8}]},
            "pinned_layout": {"tp": 1, "pp": 1, "replicas": 1},
        }
    )
    result = plan(spec)
    unfit = [c for c in (*result.candidates, result.pinned) if not c.fits]
    assert unfit
    for cand in unfit:
        assert all(getattr(cand, name) is None for name in SPEED_FIELDS), cand.id
        assert cand.rejected_reason is not None
        assert cand.serving is None
    stored = json.loads(json.dumps(result.to_dict()))
    assert stored["pinned"]["ttft_ms"] is None
    assert PlanResult.from_dict(stored).pinned.ttft_ms is None


@pytest.mark.parametrize("fits_memory", [True, False])
def test_a_plan_stored_before_reads_back_with_the_phantom_speeds_gone(fits_memory):
    from planner.engine.result.plan_result import _upgrade_v6

    cand = {
        "fits": False,
        "ttft_ms": 9.5e14,
        "output_throughput_tok_s": 0.0,
        "rejected_reason": {
            "code": "reject_room" if fits_memory else "reject_memory",
            "params": {"replicas": 2, "gpus": 4, "room": 1} if fits_memory else {},
        },
    }
    upgraded = _upgrade_v6({"candidates": [cand], "pinned": cand})
    for c in (upgraded["candidates"][0], upgraded["pinned"]):
        assert (c["ttft_ms"] is None) is not fits_memory
