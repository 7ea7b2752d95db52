"""Every failure of METRICS.md "What every poll must survive", against a real local HTTP server.

Each case: a good poll first, then the failure. The error is stored on the target with its time
and kind, every earlier sample stays, and the next poll tries again.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from monitoring import conf
from monitoring.models import PollStatus, Sample, TargetSnapshot
from monitoring.polling.run import poll, scrape_target
from monitoring.scrape.fetch import FetchPolicy
from tests.monitoring.conftest import FIXTURES

pytestmark = [pytest.mark.django_db, pytest.mark.enable_socket]

IDLE = (FIXTURES / "vllm" / "v0_32_metrics_idle.txt").read_bytes()
AFTER = (FIXTURES / "vllm" / "v0_32_metrics_after.txt").read_bytes()
PROM = {"Content-Type": "text/plain; version=1.0.0; charset=utf-8"}


@pytest.fixture
def fast_limits(settings):
    settings.MONITORING_TOTAL_TIMEOUT_S = 1.0
    settings.MONITORING_CONNECT_TIMEOUT_S = 0.5
    settings.MONITORING_MAX_RESPONSE_BYTES = 200_000


@pytest.fixture
def served(http_server, make_target, fast_limits):
    """A target on the scriptable server, polled once successfully."""
    base, script = http_server
    script.route = lambda path: (200, PROM, [IDLE])
    target = make_target(base_url=f"{base}/v")
    first = poll(target)
    assert first.ok, first.error
    return target, script, base


def _samples(target) -> set[int]:
    return set(Sample.objects.filter(target=target).values_list("pk", flat=True))


def _assert_failed(target, kind: str, before: set[int]) -> None:
    target.refresh_from_db()
    assert target.last_status == PollStatus.ERROR
    assert target.last_error_kind == kind, target.last_error
    assert target.last_error
    assert target.last_error_at is not None
    assert target.consecutive_failures == 1
    assert before <= _samples(target)


def _endless(chunk: bytes, delay_s: float) -> Iterator[bytes]:
    while True:
        yield chunk
        time.sleep(delay_s)


def _slow(delay_s: float) -> Iterator[bytes]:
    time.sleep(delay_s)
    yield IDLE


def _redirect_to(location: str):
    return lambda path: (302, {"Location": location, "Content-Length": "0"}, [b""])


CASES = {
    "http-500": (lambda path: (500, {}, [b"internal error"]), "http_status"),
    "http-404": (lambda path: (404, {}, [b"not found"]), "http_status"),
    "http-401": (lambda path: (401, {}, [b"unauthorized"]), "http_status"),
    "redirect-to-another-host": (_redirect_to("http://example.invalid/metrics"), "redirect"),
    "body-over-the-size-cap": (
        lambda path: (200, {**PROM, "Transfer-Encoding": "chunked"}, _chunked(b"#" * 300_000)),
        "too_large",
    ),
    "declared-length-over-the-cap": (lambda path: (200, PROM, [b"# x\n" * 60_000]), "too_large"),
    "body-that-never-ends": (
        lambda path: (200, {**PROM, "Transfer-Encoding": "chunked"}, _chunked_stream()),
        "timeout",
    ),
    "answer-slower-than-the-total-timeout": (
        lambda path: (200, PROM, _slow(2.0)),
        "timeout",
    ),
    "malformed-text": (lambda path: (200, PROM, [b"<html>login</html>\n"]), "parse"),
    "not-prometheus-at-all": (lambda path: (200, PROM, [b"vllm:num_requests_running\n"]), "parse"),
}


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _chunked(data: bytes) -> list[bytes]:
    return [_chunk(data[i : i + 50_000]) for i in range(0, len(data), 50_000)] + [b"0\r\n\r\n"]


def _chunked_stream() -> Iterator[bytes]:
    for part in _endless(b"# HELP x y\n", 0.05):
        yield _chunk(part)


@pytest.mark.parametrize(("route", "kind"), list(CASES.values()), ids=list(CASES))
def test_a_failure_is_stored_with_its_time_and_no_sample_is_lost(served, route, kind):
    target, script, _base = served
    before = _samples(target)
    script.route = route

    report = poll(target)

    assert not report.ok
    _assert_failed(target, kind, before)


def test_connection_refused(make_target, fast_limits):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = make_target(base_url=f"http://127.0.0.1:{port}")

    poll(target)

    _assert_failed(target, "connect", set())


def test_dns_failure(make_target, monkeypatch, fast_limits):
    def no_dns(host: str, port: int):
        raise socket.gaierror(-2, "Name or service not known")

    base = conf.fetch_policy
    monkeypatch.setattr(
        "monitoring.polling.run.conf.fetch_policy",
        lambda **kw: FetchPolicy(
            total_timeout_s=base(**kw).total_timeout_s, resolver=no_dns, allowlist=base().allowlist
        ),
    )
    target = make_target(base_url="http://127.0.0.1:9/v")
    target.base_url = "http://vllm.unresolvable.example:8000"  # saved before DNS broke

    poll(target)

    _assert_failed(target, "dns", set())


def test_the_next_poll_after_a_failure_tries_again_and_recovers(served):
    target, script, _base = served
    script.route = lambda path: (503, {}, [b"restarting"])
    poll(target)

    script.route = lambda path: (200, PROM, [AFTER])
    report = poll(target)

    assert report.ok
    target.refresh_from_db()
    assert target.last_status == PollStatus.OK
    assert target.consecutive_failures == 0


def test_a_counter_that_goes_backwards_is_a_reset_never_a_negative_rate(served):
    target, script, _base = served
    script.route = lambda path: (200, PROM, [AFTER])
    time.sleep(0.01)
    poll(target)
    # A restart: counters back to zero (same payload as before any traffic, new start time).
    restarted = IDLE.replace(
        b"process_start_time_seconds 1.79602862306e+09", b"process_start_time_seconds 1.9e+09"
    )
    script.route = lambda path: (200, PROM, [restarted])

    report = poll(target)

    assert report.ok
    rates = Sample.objects.filter(target=target, series__endswith="_per_s")
    assert all(value >= 0 for value in rates.values_list("value", flat=True))


def test_a_counter_going_backwards_within_the_same_process_yields_no_rate(served):
    target, script, _base = served
    script.route = lambda path: (200, PROM, [AFTER])
    time.sleep(0.01)
    poll(target)
    script.route = lambda path: (200, PROM, [IDLE])  # same start time, smaller counters
    time.sleep(0.01)

    report = poll(target)

    assert report.ok
    assert "vllm.prompt_tokens_per_s" not in report.values
    assert Sample.objects.filter(series="vllm.prompt_tokens_per_s", value__lt=0).count() == 0


def test_duplicate_label_sets_are_stored_once(served):
    target, script, _base = served
    line = b'vllm:num_requests_waiting{engine="0",model_name="tiny-llama"} 0.0\n'
    duplicated = IDLE.replace(line, line + line)
    assert duplicated != IDLE
    script.route = lambda path: (200, PROM, [duplicated])

    report = poll(target)

    assert report.ok
    assert (
        Sample.objects.filter(target=target, series="vllm.requests_waiting", ts=report.ts).count()
        == 1
    )


def test_missing_label_sets_are_no_data_not_an_error(served):
    target, script, _base = served
    trimmed = b"\n".join(
        line for line in IDLE.splitlines() if not line.startswith(b"vllm:num_requests_waiting")
    )
    script.route = lambda path: (200, PROM, [trimmed])

    report = poll(target)

    assert report.ok
    assert not Sample.objects.filter(series="vllm.requests_waiting", ts=report.ts).exists()


@pytest.mark.parametrize("bad", [b"NaN", b"+Inf", b"-Inf"], ids=["nan", "plus-inf", "minus-inf"])
def test_nan_and_infinite_values_are_never_stored(served, bad):
    target, script, _base = served
    line = b'vllm:kv_cache_usage_perc{engine="0",model_name="tiny-llama"} 0.0'
    assert line in IDLE
    script.route = lambda path: (
        200,
        PROM,
        [IDLE.replace(line, line.replace(b"0.0", bad))],
    )

    report = poll(target)

    assert report.ok
    assert not Sample.objects.filter(series="vllm.kv_cache_usage_pct", ts=report.ts).exists()


def test_clock_skew_between_scrapes_yields_no_rate(served):
    target, script, _base = served
    snapshot = TargetSnapshot.objects.get(target=target)
    snapshot.data["ts"] = time.time() + 3600  # the previous scrape claims to be in the future
    snapshot.save()
    script.route = lambda path: (200, PROM, [AFTER])

    report = poll(target)

    assert report.ok
    assert not any(key.endswith("_per_s") for key in report.values if key.startswith("vllm."))


def test_a_slow_target_does_not_delay_another_polled_alongside(
    http_server, make_target, fast_limits
):
    from concurrent.futures import ThreadPoolExecutor

    base, script = http_server
    script.route = lambda path: (
        (200, PROM, _slow(3.0)) if path.startswith("/slow") else (200, PROM, [IDLE])
    )
    slow = make_target(base_url=f"{base}/slow")
    fast = make_target(base_url=f"{base}/fast")

    started = time.monotonic()

    def finished_after(target):
        # The fetch part of a poll (storage is per worker process; threads share one test DB).
        scrape_target(target)
        return time.monotonic() - started

    with ThreadPoolExecutor(2) as pool:
        slow_s, fast_s = pool.map(finished_after, [slow, fast])

    # Not queued behind the slow one: the fast poll ends well before the slow one is cut. (An
    # order, not a wall-clock bound, so a busy machine does not fail it.)
    assert fast_s < slow_s - 0.5
    assert 0.9 <= slow_s < 2.5  # cut at the 1 s total timeout, not the server's 3 s
