"""The worker survives acking on a Redis connection that closed under it, and only then."""

from types import SimpleNamespace

import pytest
from kombu.transport import redis as kombu_redis

from config import kombu_redis_fix


def _qos(client):
    qos = kombu_redis.QoS.__new__(kombu_redis.QoS)
    qos.channel = SimpleNamespace(connection=SimpleNamespace(client=client))
    return qos


@pytest.fixture
def ack_fails(monkeypatch):
    def fail(self, delivery_tag):
        raise AttributeError("'NoneType' object has no attribute 'hostname'")

    monkeypatch.setattr(kombu_redis_fix, "_original_ack", fail)


def test_the_patch_is_installed_by_the_celery_app():
    assert kombu_redis.QoS.ack is kombu_redis_fix._ack_unless_disconnected


def test_an_ack_on_a_closed_connection_is_a_warning(ack_fails, caplog):
    kombu_redis.QoS.ack(_qos(client=None), "tag-1")

    assert "before message tag-1 was acked" in caplog.text


def test_other_attribute_errors_still_raise(ack_fails):
    with pytest.raises(AttributeError):
        kombu_redis.QoS.ack(_qos(client=object()), "tag-2")


@pytest.fixture
def restore_fails(monkeypatch):
    def fail(self, client=None):
        raise AttributeError("'NoneType' object has no attribute 'hostname'")

    monkeypatch.setattr(kombu_redis_fix, "_original_restore_unacked", fail)


def test_restoring_unacked_messages_on_a_closed_connection_is_a_warning(restore_fails, caplog):
    assert kombu_redis.QoS.restore_unacked is kombu_redis_fix._restore_unacked_unless_disconnected

    kombu_redis.QoS.restore_unacked(_qos(client=None))

    assert "unacked messages come back after the visibility timeout" in caplog.text


def test_restoring_still_raises_other_attribute_errors(restore_fails):
    with pytest.raises(AttributeError):
        kombu_redis.QoS.restore_unacked(_qos(client=object()))
