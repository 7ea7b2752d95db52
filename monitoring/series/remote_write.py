"""Prometheus remote write 1.0: a WriteRequest (protobuf), snappy-compressed (block format).

The four messages of the protocol (prometheus/prompb: WriteRequest, TimeSeries, Label, Sample)
are declared here with the protobuf runtime instead of generated code: they are small and
stable, and this keeps protoc out of the build.

ServePlan's series become Prometheus series as follows: the key `vllm.ttft_seconds.p95` is the
metric `serveplan:vllm:ttft_seconds:p95` (dots are not allowed in metric names and colons never
occur in keys, so the mapping is one to one); the target is the label `serveplan_target` (its
id, stable across renames) with `instance` (its name) and `job="serveplan"`; a labelled series
also carries `serveplan_labelled="1"`, so that `serveplan_labelled=""` selects exactly the
unlabelled one (the embedded store's `labels=""`). A sample label that collides with one of
these is sent as `exported_<name>`, as Prometheus does for scraped labels.

The fleet's sums (monitoring.fleet, once per scheduler tick) are written as the target
`FLEET` (`serveplan_target="0"`, `instance="fleet"`; no real target has id 0), so that the
overview reads one series per key instead of summing every target's at each request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import cramjam
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from monitoring.scrape.series import Labels

from .model import TargetRef, WriteBatch

HEADERS = {
    "Content-Encoding": "snappy",
    "Content-Type": "application/x-protobuf",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
    "User-Agent": "serveplan-remote-write",
}
METRIC_PREFIX = "serveplan:"
TARGET_LABEL = "serveplan_target"
LABELLED_LABEL = "serveplan_labelled"
JOB = "serveplan"
RESERVED_LABELS = frozenset({"__name__", "job", "instance", TARGET_LABEL, LABELLED_LABEL})
EXPORTED_PREFIX = "exported_"
# The scheduler's tick, which writes the fleet's sums: the one value of it (monitoring.fleet.
# TICK_STEP_S and monitoring.tasks.SCHEDULER_INTERVAL_S are this; config/celery.py's beat
# entry is checked against it by a test). Here since this module is pure: the fleet's is not.
FLEET_TICK_S = 5
FLEET = TargetRef(id=0, name="fleet", kind="fleet", interval_s=FLEET_TICK_S)


def _declare() -> tuple[type, type, type, type]:
    proto = descriptor_pb2.FileDescriptorProto(
        name="serveplan_prompb.proto", package="serveplan.prompb", syntax="proto3"
    )
    F = descriptor_pb2.FieldDescriptorProto

    def message(name: str, *fields: tuple[str, int, int, int, str]) -> None:
        msg = proto.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = msg.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name

    one, many = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message("Label", ("name", 1, F.TYPE_STRING, one, ""), ("value", 2, F.TYPE_STRING, one, ""))
    message("Sample", ("value", 1, F.TYPE_DOUBLE, one, ""), ("timestamp", 2, F.TYPE_INT64, one, ""))
    message(
        "TimeSeries",
        ("labels", 1, F.TYPE_MESSAGE, many, ".serveplan.prompb.Label"),
        ("samples", 2, F.TYPE_MESSAGE, many, ".serveplan.prompb.Sample"),
    )
    message("WriteRequest", ("timeseries", 1, F.TYPE_MESSAGE, many, ".serveplan.prompb.TimeSeries"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    get = message_factory.GetMessageClass
    return tuple(  # type: ignore[return-value]
        get(pool.FindMessageTypeByName(f"serveplan.prompb.{name}"))
        for name in ("WriteRequest", "TimeSeries", "Label", "Sample")
    )


WriteRequest, TimeSeries, Label, Sample = _declare()


def metric_name(key: str) -> str:
    """Return the Prometheus metric name of a series key."""
    return METRIC_PREFIX + key.replace(".", ":")


def key_of(metric: str) -> str:
    """Return the series key of one of our metric names (metric_name's inverse)."""
    return metric.removeprefix(METRIC_PREFIX).replace(":", ".")


def sample_label_name(name: str) -> str:
    return EXPORTED_PREFIX + name if name in RESERVED_LABELS else name


def series_labels(metric: Mapping[str, str]) -> tuple[int | None, Labels]:
    """Return (target id, the sample's own labels) of a series as a server returns it."""
    target = metric.get(TARGET_LABEL, "")
    own = []
    for name, value in metric.items():
        if name in RESERVED_LABELS:
            continue
        original = name.removeprefix(EXPORTED_PREFIX)
        own.append((original if original in RESERVED_LABELS else name, value))
    return (int(target) if target.isdigit() else None), tuple(sorted(own))


def _labels_of(batch: WriteBatch, key: str, labels: Labels) -> list[tuple[str, str]]:
    pairs = [
        ("__name__", metric_name(key)),
        ("instance", batch.target.name),
        ("job", JOB),
        (TARGET_LABEL, str(batch.target.id)),
        *((sample_label_name(n), v) for n, v in labels),
    ]
    if labels:
        pairs.append((LABELLED_LABEL, "1"))
    return sorted(pairs)  # the protocol wants labels sorted by name


def encode(batches: Iterable[WriteBatch]) -> bytes:
    """Return the snappy-compressed WriteRequest of every sample of the batches."""
    request = WriteRequest()
    for batch in batches:
        ts_ms = int(round(batch.ts.timestamp() * 1000))
        for sample in batch.samples:
            series = request.timeseries.add()
            for name, value in _labels_of(batch, sample.key, sample.labels):
                series.labels.add(name=name, value=value)
            series.samples.add(value=sample.value, timestamp=ts_ms)
    return bytes(cramjam.snappy.compress_raw(request.SerializeToString()))


def decode(body: bytes) -> list[tuple[dict[str, str], list[tuple[int, float]]]]:
    """Return (labels, [(ms, value)]) of each series of a compressed WriteRequest (tests, and
    the copy command's dry run)."""
    request = WriteRequest()
    request.ParseFromString(bytes(cramjam.snappy.decompress_raw(body)))
    return [
        (
            {label.name: label.value for label in series.labels},
            [(s.timestamp, s.value) for s in series.samples],
        )
        for series in request.timeseries
    ]
