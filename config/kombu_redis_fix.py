"""Keep a Celery worker alive when it acks a message on a Redis connection that just closed.

kombu's Redis transport builds a new client from the channel's connection info to remove an
acked message from its unacked index; after a broker restart that info is gone and the
AttributeError ends the worker (kombu issues #582, #659 describe the same path). The message
needs no ack then: Redis lost the index with the restart, and our tasks are idempotent, so a
redelivery writes nothing twice. This patch turns that one failure into a warning.
"""

import logging

from kombu.transport import redis as kombu_redis

logger = logging.getLogger(__name__)

_original_ack = kombu_redis.QoS.ack


def _ack_unless_disconnected(self: kombu_redis.QoS, delivery_tag: object) -> None:
    try:
        _original_ack(self, delivery_tag)
    except AttributeError:
        if getattr(self.channel.connection, "client", None) is not None:
            raise
        logger.warning("broker connection closed before message %s was acked", delivery_tag)


def install() -> None:
    """Patch kombu's Redis QoS.ack once."""
    if kombu_redis.QoS.ack is not _ack_unless_disconnected:
        kombu_redis.QoS.ack = _ack_unless_disconnected
