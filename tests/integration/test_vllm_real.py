"""A real vLLM CPU server, polled before and after a few completions."""

import time

import httpx
import pytest

from monitoring.scrape import scrape_once

pytestmark = [pytest.mark.vllm, pytest.mark.enable_socket]


@pytest.fixture(scope="module")
def vllm_server(tiny_vllm):
    """The tiny model's base URL (tests/integration/conftest.py starts it once)."""
    return tiny_vllm.url


def _complete(base: str, n: int) -> None:
    prompt = "the model server token cache block memory gpu node ray plan serve request " * 3
    for i in range(n):
        response = httpx.post(
            f"{base}/v1/completions",
            json={"model": "tiny-llama", "prompt": prompt, "max_tokens": 16 + i},
            timeout=120,
        )
        response.raise_for_status()


def _values(result) -> dict[str, float]:
    return {sample.series_id: sample.value for sample in result.samples}


def test_real_vllm_poll_reads_capacity_rates_and_latency(vllm_server):
    before = scrape_once(vllm_server, "vllm")
    assert before.ok, before.errors
    idle = _values(before)

    _complete(vllm_server, 6)
    time.sleep(1.5)
    after = scrape_once(vllm_server, "vllm", previous=before.raw)

    assert after.ok, after.errors
    values = _values(after)
    # The live server's KV capacity comes from vllm:cache_config_info.
    assert idle["vllm.kv_cache_blocks"] > 0
    assert values["vllm.kv_cache_capacity_tokens"] == (
        values["vllm.kv_cache_blocks"] * values["vllm.kv_cache_block_size_tokens"]
    )
    # Six completions of 16..21 tokens happened between the two polls.
    assert values["vllm.generation_tokens_per_s"] > 0
    assert values["vllm.prompt_tokens_per_s"] > 0
    assert values['vllm.requests_finished_per_s{finished_reason="length"}'] > 0
    assert values["vllm.completion_ratio"] == 1.0
    ttft = [values[f"vllm.ttft_seconds.{q}"] for q in ("p50", "p95", "p99")]
    assert 0 < ttft[0] <= ttft[1] <= ttft[2]
    assert values["vllm.requests_running"] == 0
    # /v1/models: the served name and the path it was loaded from (plan vs reality's model
    # check), and the context length.
    served = after.info["served_models"][0]
    assert served["id"] == "tiny-llama"
    assert served["root"].endswith("tiny-llama")
    assert served["max_model_len"] == 512


@pytest.mark.django_db
def test_a_real_server_linked_to_a_plan_is_polled_and_compared(vllm_server, planner):
    """`manage.py poll` twice around real completions, then the plan-comparison contract."""
    from io import StringIO

    from django.core.management import call_command
    from rest_framework.test import APIClient

    from monitoring.services import target_create
    from planner.services import plan_create
    from tests.planner.conftest import S1_SPEC
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    plan = plan_create(spec={**S1_SPEC}, actor=planner)
    target = target_create(name="tiny", kind="vllm", base_url=vllm_server, plan=plan)
    call_command("poll", "tiny", stdout=StringIO())
    _complete(vllm_server, 4)
    time.sleep(1.5)
    call_command("poll", "tiny", stdout=StringIO())
    api = APIClient()
    api.force_authenticate(planner)

    body = api.get(f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/?window=15m").json()

    codes = {w["code"] for w in body["warnings"]}
    # The tiny random Llama is not the plan's Llama-3.1-70B, and runs 512 tokens of context.
    assert {"model_mismatch", "max_model_len_mismatch"} <= codes
    rows = {r["quantity"]: r for r in body["rows"]}
    assert rows["kv_blocks"]["observed"] > 0
    assert rows["kv_blocks"]["deviation_pct"] < 0
    assert rows["kv_blocks"]["within_tolerance"] is False
    assert rows["itl_p95"]["observed"] > 0
