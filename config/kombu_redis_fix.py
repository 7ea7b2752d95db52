"""Keep a Celery worker alive when Redis closes the connection under it.

kombu's Redis transport builds a new client from the channel's connection info both to remove an
acked message from its unacked index and, when the channel closes after the connection was lost,
to put the unacked messages back. After a broker restart that info is gone and the AttributeError
ends the worker ("Unrecoverable error"; kombu issues #582, #659 describe the same path). Neither
step is needed then: Redis lost the index with the restart or, if it did not, kombu restores the
messages once their visibility timeout passes; our tasks are idempotent, so a redelivery writes
nothing twice. This patch turns those two failures into warnings.
"""

import logging

from kombu.transport import redis as kombu_redis

logger = logging.getLogger(__name__)

_original_ack = kombu_redis.QoS.ack
_original_restore_unacked = kombu_redis.QoS.restore_unacked


def _disconnected(qos: kombu_redis.QoS) -> bool:
    return getattr(qos.channel.connection, "client", None) is None


def _ack_unless_disconnected(self: kombu_redis.QoS, delivery_tag: object) -> None:
    try:
        _original_ack(self, delivery_tag)
    except AttributeError:
        if not _disconnected(self):
            raise
        logger.warning("broker connection closed before message %s was acked", delivery_tag)


def _restore_unacked_unless_disconnected(self: kombu_redis.QoS, client: object = None) -> object:
    try:
        return _original_restore_unacked(self, client)
    except AttributeError:
        if not _disconnected(self):
            raise
        logger.warning(
            "broker connection closed: unacked messages come back after the visibility timeout"
        )
        return None


def install() -> None:
    """Patch kombu's Redis QoS.ack and QoS.restore_unacked once."""
    if kombu_redis.QoS.ack is not _ack_unless_disconnected:
        kombu_redis.QoS.ack = _ack_unless_disconnected
    if kombu_redis.QoS.restore_unacked is not _restore_unacked_unless_disconnected:
        kombu_redis.QoS.restore_unacked = _restore_unacked_unless_disconnected
