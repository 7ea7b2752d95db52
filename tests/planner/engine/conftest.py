"""Spec builders shared by the engine tests (no database)."""

import pytest

# A config.json of the Llama-3-8B shape, for specs with an inline model.
LLAMA_8B_CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
}


def hardware(n, gpus, gpu, *, link=25, kind="ethernet", **extra):
    return {
        "node_count": n,
        "gpus_per_node": gpus,
        "gpu": gpu,
        "inter_node_gbps": link,
        "inter_node_kind": kind,
        "data_nic": "eth1",
        **extra,
    }


@pytest.fixture
def s1_spec():
    return {
        "model": "llama-3.1-70b",
        "weight_dtype": "int8",
        "max_model_len": 8192,
        "workload": {"concurrency": 64, "avg_input_tokens": 1024, "avg_output_tokens": 512},
        "hardware": hardware(2, 8, "a800-80g-sxm"),
    }


@pytest.fixture
def s2_hardware():
    return hardware(2, 4, "a100-80g-sxm")
