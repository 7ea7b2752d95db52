"""vLLM extraction on recorded payloads (real 0.32, synthesized v0.6/v0.8) and edge cases."""

from __future__ import annotations

import json

import pytest

from monitoring.scrape import from_text
from monitoring.scrape.run import ScrapeResult
from monitoring.scrape.vllm import LEGACY_NAMES, extract

from .conftest import fixture_text


def values(result: ScrapeResult) -> dict[str, float]:
    return {s.series_id: s.value for s in result.samples}


def real(name: str) -> str:
    return fixture_text("vllm", f"v0_32_metrics_{name}.txt")


def test_real_032_gauges_and_live_kv_capacity_from_cache_config_info():
    got = values(from_text(real("after"), "vllm", ts=0))

    assert got["vllm.requests_running"] == 0
    assert got["vllm.requests_waiting"] == 0
    assert got['vllm.requests_waiting_by_reason{reason="capacity"}'] == 0
    assert got["vllm.kv_cache_usage_pct"] == 0
    assert got["vllm.kv_cache_blocks"] == 8192
    assert got["vllm.kv_cache_block_size_tokens"] == 128
    assert got["vllm.kv_cache_capacity_tokens"] == 1048576
    assert got["vllm.kv_cache_max_concurrency"] == 2048
    assert got["vllm.gpu_memory_utilization_ratio"] == pytest.approx(0.92)


def test_real_032_first_poll_has_no_rates():
    got = values(from_text(real("after"), "vllm", ts=0))

    assert not any(key.endswith("_per_s") or ".p95" in key for key in got)


def test_real_032_rates_and_quantiles_between_two_real_scrapes():
    elapsed = json.loads(fixture_text("vllm", "v0_32_capture_times.json"))["after_to_later_s"]
    first = from_text(real("after"), "vllm", ts=1000.0)
    second = from_text(real("later"), "vllm", ts=1000.0 + elapsed, previous=first.raw)
    got = values(second)

    prompt_delta = (
        second.raw.counters["vllm.prompt_tokens"] - first.raw.counters["vllm.prompt_tokens"]
    )
    assert prompt_delta > 0
    assert got["vllm.prompt_tokens_per_s"] == pytest.approx(prompt_delta / elapsed)
    assert got["vllm.generation_tokens_per_s"] > 0
    # Four more completions: three ran to max_tokens, one hit the random model's EOS.
    assert got['vllm.requests_finished_per_s{finished_reason="length"}'] == pytest.approx(
        3 / elapsed
    )
    assert got['vllm.requests_finished_per_s{finished_reason="stop"}'] == pytest.approx(1 / elapsed)
    assert got["vllm.requests_per_s"] == pytest.approx(4 / elapsed)
    assert got["vllm.completion_ratio"] == 1.0
    assert got["vllm.preemptions_per_s"] == 0
    assert got["vllm.http_errors_per_s"] == 0
    assert (
        got["vllm.ttft_seconds.p50"] <= got["vllm.ttft_seconds.p95"] <= got["vllm.ttft_seconds.p99"]
    )
    assert got["vllm.e2e_latency_seconds.p50"] > 0


def test_real_032_payload_is_taken_as_the_raw_snapshot_with_its_process_epoch():
    result = from_text(real("idle"), "vllm", ts=5.0)

    assert result.raw is not None
    assert result.raw.epoch is not None
    assert result.raw.counters["vllm.prompt_tokens"] == 0
    assert "vllm.ttft_seconds" in result.raw.histograms
    assert result.info["cache_config"]["num_gpu_blocks"] == "8192"
    assert result.info["models"] == ["tiny-llama"]


@pytest.mark.parametrize("version", ["0_6", "0_8"])
def test_old_names_fill_the_same_series_as_new_ones(version):
    a = fixture_text("vllm", f"v{version}_synth_metrics_a.txt")
    b = fixture_text("vllm", f"v{version}_synth_metrics_b.txt")
    got = values(from_text(b, "vllm", ts=15.0, previous=from_text(a, "vllm", ts=0.0).raw))

    assert got["vllm.kv_cache_usage_pct"] == pytest.approx(41.0)  # gpu_cache_usage_perc
    assert "vllm.inter_token_latency_seconds.p95" in got  # time_per_output_token_seconds
    assert 0.3 < got["vllm.prefix_cache_hit_ratio"] < 0.4  # gauge (0.6) or gpu_prefix_* (0.8)
    assert got["vllm.prompt_tokens_per_s"] > 0
    assert got["vllm.kv_cache_capacity_tokens"] == 27910 * 16  # blocks x block size


def test_v0_throughput_gauges_stand_in_only_without_counters():
    text = (
        "# TYPE vllm:avg_prompt_throughput_toks_per_s gauge\n"
        'vllm:avg_prompt_throughput_toks_per_s{model_name="m"} 1200.5\n'
        "# TYPE vllm:avg_generation_throughput_toks_per_s gauge\n"
        'vllm:avg_generation_throughput_toks_per_s{model_name="m"} 300.0\n'
    )
    got = values(from_text(text, "vllm", ts=0))

    assert got["vllm.prompt_tokens_per_s"] == 1200.5
    assert got["vllm.generation_tokens_per_s"] == 300.0


def test_new_name_wins_when_a_server_exposes_both():
    text = (
        "# TYPE vllm:gpu_cache_usage_perc gauge\n"
        'vllm:gpu_cache_usage_perc{model_name="m"} 0.9\n'
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        'vllm:kv_cache_usage_perc{model_name="m"} 0.25\n'
    )

    assert values(from_text(text, "vllm", ts=0))["vllm.kv_cache_usage_pct"] == 25.0


def test_legacy_table_maps_every_old_name_listed_in_metrics_md():
    assert LEGACY_NAMES["vllm:gpu_cache_usage_perc"] == "vllm:kv_cache_usage_perc"
    assert LEGACY_NAMES["vllm:gpu_prefix_cache_queries"] == "vllm:prefix_cache_queries"
    assert LEGACY_NAMES["vllm:gpu_prefix_cache_hits"] == "vllm:prefix_cache_hits"
    assert LEGACY_NAMES["vllm:time_per_output_token_seconds"] == "vllm:inter_token_latency_seconds"


DP = """# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:num_requests_running{model_name="m",engine="1"} 4
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.4
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 100
vllm:prompt_tokens_total{engine="1",model_name="m"} 50
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="1000"} 1
vllm:cache_config_info{block_size="16",engine="1",num_gpu_blocks="1000"} 1
"""


def test_data_parallel_engines_are_summed_and_usage_averaged():
    result = from_text(DP, "vllm", ts=0)
    got = values(result)

    assert got["vllm.requests_running"] == 7
    assert got["vllm.kv_cache_usage_pct"] == pytest.approx(30.0)
    assert got["vllm.kv_cache_blocks"] == 2000
    assert got["vllm.kv_cache_capacity_tokens"] == 32000
    assert result.raw.counters["vllm.prompt_tokens"] == 150


def test_several_models_add_per_model_series():
    text = DP.replace('model_name="m",engine="1"', 'model_name="n",engine="1"')

    got = values(from_text(text, "vllm", ts=0))

    assert got["vllm.requests_running"] == 7
    assert got['vllm.requests_running{model="m"}'] == 3
    assert got['vllm.requests_running{model="n"}'] == 4


def test_nan_and_inf_values_are_dropped_with_a_warning():
    text = (
        "# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{model_name="m"} NaN\n'
        "# TYPE vllm:num_requests_waiting gauge\n"
        'vllm:num_requests_waiting{model_name="m"} +Inf\n'
        "# TYPE vllm:prompt_tokens_total counter\n"
        'vllm:prompt_tokens_total{model_name="m"} NaN\n'
    )

    result = from_text(text, "vllm", ts=0)

    assert result.ok
    assert values(result) == {}
    assert result.warnings


def test_restart_is_a_reset_never_a_negative_rate():
    before = from_text(real("later"), "vllm", ts=100.0)
    # Same process start (no epoch change) but counters lower: the idle payload after the busy one.
    after = from_text(real("idle"), "vllm", ts=115.0, previous=before.raw)

    assert all(s.value >= 0 for s in after.samples)
    assert "vllm.prompt_tokens_per_s" not in values(after)


def test_new_process_start_time_means_no_rates_at_all():
    first = from_text(real("after"), "vllm", ts=100.0)
    restarted = real("later").replace(
        "process_start_time_seconds 1.79602862306e+09", "process_start_time_seconds 1.8e+09"
    )

    second = from_text(restarted, "vllm", ts=115.0, previous=first.raw)

    assert not any(s.key.endswith("_per_s") for s in second.samples)


def test_a_series_missing_from_the_current_scrape_yields_nothing_for_it():
    first = from_text(real("after"), "vllm", ts=100.0)
    text = "\n".join(
        line for line in real("later").splitlines() if 'finished_reason="stop"' not in line
    )

    got = values(from_text(text, "vllm", ts=115.0, previous=first.raw))

    assert 'vllm.requests_finished_per_s{finished_reason="stop"}' not in got
    assert 'vllm.requests_finished_per_s{finished_reason="length"}' in got


def test_previous_snapshot_round_trips_through_json():
    first = from_text(real("after"), "vllm", ts=100.0)
    stored = json.loads(json.dumps(first.raw.to_json()))

    second = from_text(real("later"), "vllm", ts=110.0, previous=stored)

    assert "vllm.prompt_tokens_per_s" in values(second)


def test_unreadable_stored_snapshot_only_costs_the_rates():
    result = from_text(real("later"), "vllm", ts=110.0, previous={"garbage": True})

    assert result.ok
    assert "vllm.requests_running" in values(result)


def test_extract_reads_type_lines_iteration_tokens_total_is_a_histogram():
    extracted = extract(real("after"), 0.0)

    assert "vllm.iteration_tokens" not in extracted.raw.counters
