"""DOMAIN.md §8 scenarios S1–S5 on the full result."""

import json

import pytest

from planner.engine import plan, spec_from_dict
from planner.presentation.messages import english_text
from tests.planner.engine.conftest import hardware


def _ids(result, kind):
    return {x.code for x in getattr(result, kind)}


def _reason_ids(result):
    return {m.code for m in result.recommendation.reasons}


def test_s1_70b_int8_on_two_a800_nodes_replicas_inside_nodes(s1_spec):
    result = plan(spec_from_dict(s1_spec))
    rec, best = result.recommendation, result.best
    assert rec.route == "A"
    assert rec.balancer == "nginx"
    assert rec.executor_backend == "mp"
    assert (best.tp, best.pp) in {(8, 1), (4, 1)}
    assert best.nodes_per_replica == 1
    assert best.tp * best.replicas == 16
    # ≈ 9 GB of weights per GPU at TP8 (70B int8, 16-bit embeddings).
    tp8 = next(c for c in result.candidates if c.tp == 8 and c.pp == 1 and c.replicas == 2)
    assert 8.0 < tp8.memory.weights_gib < 9.5
    tp16 = next(c for c in result.candidates if c.kind == "cross-node-tp")
    assert tp16.score < best.score
    assert tp16.decode_step_ms > 5 * best.decode_step_ms
    assert {"fits_one_node", "replicas_behind_balancer", "cross_node_worse"} <= _reason_ids(result)
    assert rec.route != "C"
    assert not any(s.hit for s in result.signals if s.direction == "for_ray")
    assert result.placement.single_bundle.placeable
    json.dumps(result.to_dict())


def test_s1_ray_only_with_multi_model_signal(s1_spec):
    s1_spec["operations"] = {"multi_model_pool": True}
    result = plan(spec_from_dict(s1_spec))
    assert result.recommendation.route == "C"
    assert result.recommendation.executor_backend == "ray"
    cfg = result.configs["serve_config"]["applications"][0]["deployments"][0]
    assert cfg["ray_actor_options"]["num_gpus"] == result.best.tp * result.best.pp
    assert cfg["autoscaling_config"]["min_replicas"] >= 1
    assert {"pit_ray_num_gpus", "pit_cold_start", "pit_ray_max_restarts"} <= _ids(
        result, "pitfalls"
    )


def test_s1_one_elastic_signal_is_considered_not_adopted(s1_spec):
    s1_spec["workload"]["traffic_shape"] = "diurnal"
    result = plan(spec_from_dict(s1_spec))
    assert result.recommendation.route == "A"
    assert "ray_consider" in _reason_ids(result)
    s1_spec["workload"]["traffic_shape"] = "bursty"
    s1_spec["operations"] = {"models_change_often": True}
    assert plan(spec_from_dict(s1_spec)).recommendation.route == "C"


def test_s2a_qwen32b_two_tp4_replicas(s2_hardware):
    spec = {
        "model": "qwen2.5-32b",
        "max_model_len": 8192,
        "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "hardware": s2_hardware,
    }
    result = plan(spec_from_dict(spec))
    best = result.best
    assert result.recommendation.route == "A"
    assert (best.tp, best.pp, best.replicas) == (4, 1, 2)
    one = next(c for c in result.candidates if (c.tp, c.pp, c.replicas) == (4, 1, 1))
    ratio = best.capacity_output_tok_s / one.capacity_output_tok_s
    assert 1.8 <= ratio <= 2.0
    assert best.output_throughput_tok_s > one.output_throughput_tok_s
    tp8 = next(c for c in result.candidates if c.kind == "cross-node-tp")
    assert tp8.score < one.score < best.score
    # The 25 GbE cost is shown: tens of ms per step against a few ms of HBM-bound compute.
    assert tp8.comm_per_decode_step_ms > 20
    assert tp8.comm_per_decode_step_ms > 3 * tp8.decode_compute_ms
    assert "cross_node_worse" in _reason_ids(result)


@pytest.mark.parametrize(("concurrency", "route"), [(16, "B"), (8, "A")])
def test_s2b_qwen72b_64k(s2_hardware, concurrency, route):
    spec = {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "workload": {"concurrency": concurrency, "avg_input_tokens": 1200},
        "hardware": s2_hardware,
    }
    result = plan(spec_from_dict(spec))
    best = result.best
    assert result.recommendation.route == route
    tp4 = next(c for c in result.candidates if (c.tp, c.pp, c.replicas) == (4, 1, 1))
    assert tp4.fits  # V1 chunked prefill: TP4 starts at 64K
    assert 5 <= tp4.max_concurrency_per_replica <= 8.5  # DOMAIN: ≈ 6
    whole = next(c for c in result.candidates if (c.tp, c.pp) == (4, 2))
    assert 17 <= whole.max_concurrency_per_replica <= 23  # DOMAIN: ≈ 19
    assert "v1_chunked_prefill" in _reason_ids(result)
    if route == "B":
        assert (best.tp, best.pp) == (4, 2)
        tp8 = next(c for c in result.candidates if c.kind == "cross-node-tp")
        assert tp8.score < best.score
        assert {"must_span_nodes", "pp_over_cross_tp", "network_check"} <= _reason_ids(result)
        assert "pit_nccl_socket_ifname" in _ids(result, "pitfalls")
        assert "--hf-overrides" in result.configs["vllm_serve"][0]["argv"]
    else:
        assert (best.tp, best.pp, best.replicas) == (4, 1, 2)


def _s3(pool_kind):
    return {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "workload": {"concurrency": 16},
        "pinned_layout": {"tp": 4, "pp": 2, "replicas": 1},
        "hardware": hardware(2, 4, "a100-80g-sxm", pool_kind=pool_kind),
    }


def test_s3_dedicated_pool_uses_mp_per_node_commands():
    result = plan(spec_from_dict(_s3("dedicated")))
    assert (result.best.tp, result.best.pp) == (4, 2)
    assert result.recommendation.executor_backend == "mp"
    cmds = result.configs["vllm_serve"]
    assert [c["host"] for c in cmds] == ["node-1", "node-2"]
    assert "--headless" not in cmds[0]["argv"]
    assert "--headless" in cmds[1]["argv"]
    for c in cmds:
        assert "--nnodes" in c["argv"]
        assert "ray" not in c["argv"]
    assert result.configs["ray_start"] == []
    assert result.pinned is not None
    assert result.pinned.fits


def test_s3_shared_pool_uses_ray_placement_group_of_two_bundles():
    result = plan(spec_from_dict(_s3("shared")))
    assert result.recommendation.executor_backend == "ray"
    placement = result.placement
    assert placement.required
    assert placement.strategy == "STRICT_SPREAD"
    assert [b.resources["GPU"] for b in placement.bundles] == [4, 4]
    assert placement.placeable
    assert not placement.single_bundle.placeable
    assert placement.single_bundle.resources == {"GPU": 8}
    assert placement.alternative.bundles == ({"GPU": 4}, {"GPU": 4})
    cmds = result.configs["vllm_serve"]
    assert len(cmds) == 1
    assert "--nnodes" not in cmds[0]["argv"]
    assert cmds[0]["argv"][cmds[0]["argv"].index("--distributed-executor-backend") + 1] == "ray"
    assert all("--num-gpus=4" in c["command"] for c in result.configs["ray_start"])
    assert "pit_gpu_util_shared" in _ids(result, "pitfalls")


def test_s3_pinned_tp4_pp2_placement_when_the_model_fits_one_node():
    spec = {
        "model": "qwen2.5-32b",
        "max_model_len": 8192,
        "workload": {"concurrency": 16},
        "pinned_layout": {"tp": 4, "pp": 2, "replicas": 1},
        "hardware": hardware(2, 4, "a100-80g-sxm", pool_kind="shared"),
    }
    result = plan(spec_from_dict(spec))
    pinned = result.placement.pinned
    assert [b.resources["GPU"] for b in pinned.bundles] == [4, 4]
    assert pinned.placeable
    assert not pinned.single_bundle.placeable
    assert pinned.alternative.bundles == ({"GPU": 4}, {"GPU": 4})
    assert "pinned_layout" in _reason_ids(result)


def test_s4_qwen3_8b_single_24gb_card():
    spec = {
        "model": "qwen3-8b",
        "max_model_len": 8192,
        "gpu_memory_utilization": 0.9,
        "workload": {"concurrency": 4},
        "hardware": {"nodes": [{"hostname": "desk", "gpu": "rtx-4090", "gpu_count": 1}]},
    }
    result = plan(spec_from_dict(spec))
    best = result.best
    assert result.recommendation.route == "single"
    assert result.recommendation.executor_backend == "mp"
    assert (best.tp, best.pp, best.replicas) == (1, 1, 1)
    assert 15.0 < best.memory.weights_gib < 15.6
    assert 25_000 < best.kv_tokens_per_replica < 50_000
    assert best.max_concurrency_per_replica == pytest.approx(
        best.kv_tokens_per_replica / 8192, rel=0.01
    )
    assert "fits_one_gpu" in _reason_ids(result)
    assert result.configs["nginx_conf"] == ""
    assert result.configs["ray_start"] == []


def test_s5_70b_on_one_80gb_gpu_quantize_first():
    spec = {
        "model": "llama-3.1-70b",
        "max_model_len": 8192,
        "workload": {"concurrency": 4},
        "hardware": {"nodes": [{"hostname": "h1", "gpu": "h100-sxm", "gpu_count": 1}]},
    }
    result = plan(spec_from_dict(spec))
    options = {o.weight_dtype: o for o in result.quantization_options}
    assert not options["bf16"].fits_one_node
    assert options["fp8"].weights_gib_total == pytest.approx(67.7, abs=1.0)
    assert options["fp8"].kv_tokens_per_replica < 0.1 * options["int4"].kv_tokens_per_replica
    assert options["int4"].fits_one_node
    assert 33 < options["int4"].weights_gib_total < 40
    assert result.recommendation.weight_dtype == "int4"
    assert result.recommendation.route == "single"
    ids = _reason_ids(result)
    assert "quantize_first" in ids
    assert "quantized_barely" in ids
    advice = next(m for m in result.recommendation.reasons if m.code == "quantize_first")
    assert "accuracy" in english_text(advice)
    assert "pit_needs_quantized_checkpoint" in _ids(result, "pitfalls")


def test_nothing_fits_says_so_and_emits_no_commands():
    spec = {
        "model": "llama-3.1-405b",
        "hardware": {"nodes": [{"hostname": "x", "gpu": "rtx-4090", "gpu_count": 3}]},
    }
    result = plan(spec_from_dict(spec))
    assert result.recommendation.route == "none"
    assert not result.best.fits
    assert "nothing_fits" in _reason_ids(result)
    assert result.configs["vllm_serve"] == []
    assert english_text(result.recommendation.summary).startswith("Nothing fits")


def test_small_model_on_a_large_fleet_gets_many_tp1_or_tp2_replicas():
    # Issue 13: an 8B on 2 x 8 A100 got TP4 x 4; independent TP1/TP2 replicas serve the load
    # nearly as fast, with more failure domains and no all-reduce on every layer.
    result = plan(
        spec_from_dict(
            {
                "model": "llama-3.1-8b",
                "max_model_len": 8192,
                "workload": {"concurrency": 256},
                "hardware": hardware(2, 8, "a100-80g-sxm"),
            }
        )
    )
    rec = result.recommendation
    reasons = {m.code: m for m in rec.reasons}
    # Either branch used to pass; the case is the small replicas, so require them.
    assert rec.tp <= 2
    assert rec.replicas >= 8
    assert reasons["small_model_replicas"].params["share_pct"] >= 85
    assert "larger_tp_wins" not in reasons


def test_a_larger_tp_stays_first_when_small_replicas_are_much_slower():
    # At 16 short requests a 7B's TP2 replicas reach about 70 % of TP4's output throughput:
    # below the 85 % threshold, TP4 is kept and the reason gives the share.
    result = plan(
        spec_from_dict(
            {
                "model": "qwen2.5-7b",
                "max_model_len": 8192,
                "workload": {"concurrency": 16, "avg_input_tokens": 512, "avg_output_tokens": 256},
                "hardware": hardware(2, 8, "a100-80g-sxm"),
            }
        )
    )
    rec = result.recommendation
    reasons = {m.code: m for m in rec.reasons}
    assert rec.tp > 2
    assert reasons["larger_tp_wins"].params["share_pct"] < 85
    assert reasons["larger_tp_wins"].params["larger_tp"] == rec.tp
    assert "small_model_replicas" not in reasons


def test_quantize_first_when_a_quantized_form_fits_fewer_nodes():
    # Issue 13: a 70B at bf16 needs two 2-GPU nodes over 10 GbE, but fits one node at fp8.
    result = plan(
        spec_from_dict(
            {
                "model": "llama-3.1-70b",
                "weight_dtype": "bf16",
                "max_model_len": 8192,
                "workload": {"concurrency": 16},
                "hardware": hardware(2, 2, "a100-80g-sxm", link=10),
            }
        )
    )
    assert result.recommendation.nodes_per_replica == 2
    advice = next(m for m in result.recommendation.reasons if m.code == "quantize_fewer_nodes")
    assert (advice.params["nodes"], advice.params["requested_nodes"]) == (1, 2)
    assert advice.params["link_gbps"] == 10
    total = advice.params["weights_gib"] * advice.params["gpus"]
    assert total < advice.params["requested_weights_gib"] * advice.params["requested_gpus"]
    assert "Quantize first" in english_text(advice)


def test_every_plan_names_the_memory_rules_it_followed():
    spec = {
        "model": "qwen2.5-7b",
        "max_model_len": 8192,
        "hardware": hardware(1, 2, "h100-sxm"),
    }
    new = plan(spec_from_dict(spec))
    old = plan(spec_from_dict({**spec, "vllm_version": "0.19.0"}))
    assert new.memory_rules.cuda_graphs_subtracted
    assert not old.memory_rules.cuda_graphs_subtracted
    assert old.best.kv_tokens_per_replica > new.best.kv_tokens_per_replica
    assert (
        next(m for m in old.recommendation.reasons if m.code == "memory_rules").params[
            "vllm_version"
        ]
        == "0.19.0"
    )
    v0 = plan(spec_from_dict({**spec, "vllm_version": "0.6.4"}))
    assert v0.memory_rules.engine == "V0"
    assert v0.memory_rules.full_length_prefill
