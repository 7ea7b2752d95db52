"""The JSON contract: top-level keys, stable message ids, and a unit in every number's key."""

import json
import re

from planner.engine import plan, spec_from_dict
from planner.engine.messages import SIGNATURES, Message
from planner.presentation.messages import english_action, english_text
from tests.planner.engine.conftest import hardware

UNIT = re.compile(r"_(gib|ms|us|tok_s|gbs|gbps|bytes|tokens|params|s)(_|$)")
# Dimensionless counts, ratios and factors: their names say what they count.
DIMENSIONLESS = {
    # an expert slice's width (columns of the intermediate dimension)
    "moe_shard_knee",
    # the bundle's allocation table: counts, indices and TCP port numbers
    "usable_gpus",
    "nnodes",
    "replica",
    "ports",
    "tp",
    "pp",
    "replicas",
    "nodes",
    "gpus",
    "cross_tp",
    "score",
    # how many calibration runs a prediction's uncertainty band comes from
    "band_runs",
    "best_score",
    "runner_up_score",
    "concurrency",
    "saturation_concurrency",
    "max_concurrency_meeting_slo",
    "requests_simulated",
    "preempted_requests",
    "max_concurrency",
    "max_concurrency_per_replica",
    "max_concurrency_total",
    "single_node_concurrency",
    "span_concurrency",
    "batch_per_replica",
    "nodes_per_replica",
    "gpus_per_replica",
    "nodes_offered",
    "nodes_used",
    "hits_for",
    "hits_against",
    "hits",
    "slowdown",
    "stage_layers",
    "port",
    "schema_version",
    "max_model_len",
    "GPU",
    "CPU",
    "capacity_ratio",
    "workload_ratio",
    "per_replica",
    "int4_group_size",
    "all_reduces_per_layer",
    "overlap_factor",
    "activation_mlp_factor",
    "activation_hidden_factor",
    "sampler_logit_copies",
    "sampler_logit_copies_native",
    "sampler_logit_copies_native_early",
    "sampler_logit_copies_native_full_sort",
    "encoder_cache_copies",
    "small_replica_min_share",
    "share_pct",
    "kv_groups",
    "blocks_per_request",
    "requested_nodes",
    "requested_gpus",
    "larger_tp",
    "larger_replicas",
    "v0_activation_mlp_factor",
    "decode_mfu",
    "prefill_mfu",
    "default_max_num_seqs_large_gpu",
    "default_max_num_seqs_small_gpu",
    "default_batched_tokens_huge_gpu",
    "default_batched_tokens_large_gpu",
    "default_batched_tokens_small_gpu",
    "max_num_batched_tokens",
    "gpus_per_node",
}


def _result():
    spec = {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "workload": {"concurrency": 16},
        "pinned_layout": {"tp": 4, "pp": 1, "replicas": 2},
        "operations": {"multi_model_pool": True},
        "hardware": hardware(2, 4, "a100-80g-sxm", pool_kind="shared"),
    }
    return plan(spec_from_dict(spec))


def _numbers(value, key=None):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v, key)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield key


def test_top_level_keys_and_json():
    out = _result().to_dict()
    assert set(out) == {
        "recommendation",
        "candidates",
        "pinned",
        "quantization_options",
        "signals",
        "placement",
        "configs",
        "pitfalls",
        "assumptions",
        "network",
        "model",
        "node_selection",
        "calibration",
        "schema_version",
        "memory_rules",
    }
    json.loads(json.dumps(out))


def test_every_number_names_its_unit():
    out = _result().to_dict()
    bad = {
        k
        for k in _numbers(out)
        if k not in DIMENSIONLESS
        and not UNIT.search(k)
        and not k.endswith(("_efficiency", "_share"))
    }
    assert not bad


def test_messages_are_codes_with_the_parameters_of_their_code():
    result = _result()
    messages = [
        *result.recommendation.reasons,
        result.recommendation.summary,
        *(s.message for s in result.signals),
        *(p.message for p in result.pitfalls),
    ]
    assert messages
    for m in messages:
        assert isinstance(m, Message)
        assert set(m.params) == set(SIGNATURES[m.code])
        assert english_text(m)
    assert all(p.severity in {"high", "medium", "low", "info"} for p in result.pitfalls)
    assert all(english_action(p.message) for p in result.pitfalls)
