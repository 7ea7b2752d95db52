"""The simulator's base port: the preferred block when free, else the next free block."""

import socket

import pytest

from monitoring.simulator.ports import PORT_SPAN, block_is_free, free_base_port

pytestmark = pytest.mark.enable_socket


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_block_with_a_listening_port_is_not_free():
    with _listening_socket() as taken:
        port = taken.getsockname()[1]
        assert not block_is_free(port)
        assert not block_is_free(port - 3, span=4)


def test_the_preferred_block_is_kept_when_free_and_skipped_when_taken():
    with _listening_socket() as taken:
        port = taken.getsockname()[1]
        base = free_base_port(port)
        assert base >= port + PORT_SPAN
        assert block_is_free(base)
    assert free_base_port(base) == base


def test_ports_outside_the_valid_range_are_never_free():
    assert not block_is_free(0)
    assert not block_is_free(65530, span=16)
