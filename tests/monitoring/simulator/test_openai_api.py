"""The simulator serves OpenAI traffic with the serving model's timings, and /metrics follows it."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from benchmarks.loadgen import Endpoint, Workload, run_benchmark
from monitoring.simulator import Simulator
from monitoring.simulator.openai_api import handle
from monitoring.simulator.serving import ServingModel, SimHardware
from monitoring.simulator.vllm_sim import SimVllm, VllmProfile

LLAMA_A100 = SimHardware(model_slug="llama-3.1-8b", gpu="a100-80g-sxm", tp=1)


@pytest.fixture(scope="module")
def llama_url():
    sim = Simulator(port=0, vllm_count=1, ray=False, gpu_machines=0, faults=False)
    sim.start()
    yield sim.targets()[0].base_url
    sim.stop()


def test_the_serving_model_slows_down_with_load_and_longer_prompts():
    model = ServingModel(LLAMA_A100)
    one = model.timing(in_flight=1, prompt_tokens=256, output_tokens=64)
    many = model.timing(in_flight=64, prompt_tokens=256, output_tokens=64)
    longer = model.timing(in_flight=1, prompt_tokens=2048, output_tokens=64)
    assert many.itl_s > one.itl_s > 0
    assert longer.ttft_s > one.ttft_s > 0


def test_slowdowns_scale_the_modelled_timings():
    base = ServingModel(LLAMA_A100).timing(in_flight=4, prompt_tokens=512, output_tokens=64)
    slow = ServingModel(
        SimHardware(
            model_slug="llama-3.1-8b", gpu="a100-80g-sxm", decode_slowdown=1.5, prefill_slowdown=2.0
        )  # fmt: skip
    ).timing(in_flight=4, prompt_tokens=512, output_tokens=64)
    assert slow.itl_s == pytest.approx(base.itl_s * 1.5)
    assert slow.ttft_s == pytest.approx(base.ttft_s * 2.0)


def test_completions_whole_and_streamed(llama_url):
    body = {"prompt": "one two three", "max_tokens": 4}
    whole = httpx.post(f"{llama_url}/v1/completions", json=body).json()
    assert whole["usage"] == {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}
    assert len(whole["choices"][0]["text"].split()) == 4
    stream = httpx.post(
        f"{llama_url}/v1/completions",
        json={**body, "stream": True, "stream_options": {"include_usage": True}},
    )
    events = [e.removeprefix("data: ") for e in stream.text.split("\n\n") if e]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert [c["choices"][0]["finish_reason"] for c in chunks[:4]] == [None, None, None, "length"]
    assert chunks[4]["usage"]["completion_tokens"] == 4


def test_chat_streams_deltas(llama_url):
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "stream": True}
    text = httpx.post(f"{llama_url}/v1/chat/completions", json=body).text
    first = json.loads(text.split("\n\n")[0].removeprefix("data: "))
    assert first["choices"][0]["delta"]["role"] == "assistant"
    assert first["object"] == "chat.completion.chunk"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        pytest.param({"prompt": "x", "max_tokens": 0}, 400, id="zero-tokens"),
        pytest.param({"max_tokens": 2}, 400, id="no-prompt"),
        pytest.param({"prompt": "x", "max_tokens": 2, "model": "other"}, 404, id="other-model"),
        pytest.param({"prompt": "x", "max_tokens": 100_000}, 400, id="too-long"),
    ],
)
def test_bad_requests_are_refused(llama_url, body, status):
    assert httpx.post(f"{llama_url}/v1/completions", json=body).status_code == status


def test_tokenize_counts_words_and_a_bos(llama_url):
    answer = httpx.post(f"{llama_url}/tokenize", json={"prompt": "a b c"}).json()
    assert answer["count"] == 4


def test_a_benchmark_is_measured_on_the_simulator(llama_url):
    result = asyncio.run(
        run_benchmark(Endpoint(base_url=llama_url),
                      [Workload(requests=6, input_tokens=64, output_tokens=8, concurrency=3)])
    )  # fmt: skip
    assert result.prompts_exact
    summary = result.levels[0].summary
    assert (summary.completed, summary.total_input_tokens, summary.total_output_tokens) == (
        6, 6 * 64, 6 * 8)  # fmt: skip


def _metric(sim: SimVllm, name: str) -> float:
    sim._cache = None  # /metrics is re-rendered at most once a second
    text = sim.metrics(time.time()).decode()
    return sum(float(ln.rsplit(" ", 1)[1]) for ln in text.splitlines() if ln.startswith(name))


async def _drain(body) -> bytes:
    return b"".join([piece async for piece in body])


def test_answered_requests_enter_the_metrics():
    sim = SimVllm(VllmProfile(name="t", model="org/model", base_rps=0.0, hardware=LLAMA_A100))
    status, _, body = handle(sim, "/v1/completions", b'{"prompt": "a b", "max_tokens": 3}')
    assert status == 200
    assert sim.live_requests == 0
    asyncio.run(_drain(body))
    assert sim.live_requests == 0
    assert _metric(sim, "vllm:generation_tokens_total") == 3
    assert _metric(sim, "vllm:prompt_tokens_total") == 3
    assert _metric(sim, 'vllm:request_success_total{engine="0",finished_reason="length"') == 1
    assert _metric(sim, "vllm:time_to_first_token_seconds_count") == 1
    assert _metric(sim, "vllm:inter_token_latency_seconds_count") == 2


def test_requests_in_flight_show_as_running():
    sim = SimVllm(VllmProfile(name="t", model="org/model", base_rps=0.0, hardware=LLAMA_A100))
    _, _, body = handle(sim, "/v1/completions", b'{"prompt": "a", "max_tokens": 2, "stream": true}')

    async def first_token_then_leave() -> float:
        await anext(body)  # the first token is out: the request is being served
        running = _metric(sim, "vllm:num_requests_running")
        await body.aclose()  # the client went away
        return running

    assert asyncio.run(first_token_then_leave()) == 1
    assert sim.live_requests == 0
    assert _metric(sim, 'vllm:request_success_total{engine="0",finished_reason="abort"') == 1


def test_many_streams_at_once_keep_their_timings(llama_url):
    """64 streams in flight on the simulator's one loop: TTFT stays the modelled one."""
    result = asyncio.run(
        run_benchmark(Endpoint(base_url=llama_url),
                      [Workload(requests=64, input_tokens=32, output_tokens=4, concurrency=64)])
    )  # fmt: skip
    summary = result.levels[0].summary
    demo = SimHardware(model_slug="llama-3.1-8b", gpu="a100-80g-sxm", prefill_slowdown=1.1,
                       decode_slowdown=1.15)  # fmt: skip
    modelled = ServingModel(demo).timing(in_flight=64, prompt_tokens=32, output_tokens=4)
    assert summary.completed == 64
    # Queueing in the server would add to the modelled TTFT; allow scheduling noise only.
    assert summary.ttft.median_ms < 3 * modelled.ttft_s * 1000 + 100
