"""The embedded broker's messages appear whole: a worker never reads one half written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from kombu import Connection
from kombu.transport.virtual import BrokerState

from config import filesystem_broker


@pytest.fixture
def connection(tmp_path, monkeypatch):
    # kombu keeps the filesystem transport's declared bindings in one process-wide state: a
    # fresh one, so that each test's queue is bound (and its binding file written) again.
    monkeypatch.setattr(filesystem_broker.Transport, "global_state", BrokerState())
    folder = tmp_path / "queue"
    folder.mkdir()
    (tmp_path / "control").mkdir()  # kombu's bindings; it does not make the folder itself
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "control_folder": str(tmp_path / "control"),  # kombu's default is ./control
    }
    with Connection(
        "filesystem://",
        transport="config.filesystem_broker:Transport",
        transport_options=options,
    ) as conn:
        yield conn, folder


def _visible(folder, queue="jobs"):
    """The files kombu's reader would take from `queue`."""
    return [n for n in os.listdir(folder) if n.partition(".")[2] == f"{queue}.msg"]


def test_a_message_goes_through_whole(connection):
    conn, _ = connection
    with conn.SimpleQueue("jobs") as queue:
        queue.put({"task": "poll", "target": 7})
        message = queue.get(timeout=1)
        message.ack()

    assert message.payload == {"task": "poll", "target": 7}


def test_no_reader_sees_the_message_before_its_bytes_are_written(connection, monkeypatch):
    conn, folder = connection
    seen_while_writing = []
    encode = filesystem_broker.str_to_bytes

    def encode_and_look(text):
        seen_while_writing.append(_visible(folder))
        return encode(text)

    monkeypatch.setattr(filesystem_broker, "str_to_bytes", encode_and_look)
    with conn.SimpleQueue("jobs") as queue:
        queue.put({"n": 1})

    assert seen_while_writing == [[]]
    assert len(_visible(folder)) == 1
    assert not [n for n in os.listdir(folder) if n.endswith(filesystem_broker.PARTIAL_SUFFIX)]


def test_a_file_still_being_written_is_left_to_its_writer(connection):
    conn, folder = connection
    partial = folder / f"partial-0.jobs.msg{filesystem_broker.PARTIAL_SUFFIX}"
    partial.write_bytes(b"")  # what kombu's own transport would have read and failed on

    with conn.SimpleQueue("jobs") as queue, pytest.raises(queue.Empty):
        queue.get(timeout=0.2)

    assert partial.exists()


def test_a_failed_write_leaves_nothing_behind(connection, monkeypatch):
    conn, folder = connection

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(filesystem_broker.os, "replace", refuse)
    with conn.SimpleQueue("jobs") as queue, pytest.raises(Exception, match="Cannot add file"):
        queue.put({"n": 1})

    assert os.listdir(folder) == []


def test_the_embedded_run_uses_it():
    """Settings read without REDIS_URL (as `make run` reads them) name this transport."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    read = "from config.settings import base; print(base.CELERY_BROKER_TRANSPORT)"
    done = subprocess.run(
        [sys.executable, "-c", read], env=env, capture_output=True, text=True, check=True
    )

    assert done.stdout.strip() == "config.filesystem_broker:Transport"
