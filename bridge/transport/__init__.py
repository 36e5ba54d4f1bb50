"""The wire behind a narrow port: :class:`IntentPort` answers what a connection says,
whatever carries it; :mod:`bridge.transport.socket` carries it over the bridge's own
websocket-only Engine.IO v4 / Socket.IO v5 server (:mod:`bridge.transport.engineio_ws`,
:mod:`bridge.transport.socketio_server`); the fan-outs deliver room emits, on one process
or on every process sharing a Redis."""

from bridge.transport.fan_out import RoomFanOut
from bridge.transport.packets import CLIENT_FRAME, MALFORMED_FRAME, GuardedPacket
from bridge.transport.port import COSTED_READS, RATE_BURST, RATE_PER_SECOND, IntentPort
from bridge.transport.redis_fan_out import RedisRoomFanOut, pubsub_channel
from bridge.transport.socket import FateSocket

__all__ = [
    "CLIENT_FRAME",
    "COSTED_READS",
    "MALFORMED_FRAME",
    "RATE_BURST",
    "RATE_PER_SECOND",
    "FateSocket",
    "GuardedPacket",
    "IntentPort",
    "RedisRoomFanOut",
    "RoomFanOut",
    "pubsub_channel",
]
