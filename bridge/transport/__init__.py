"""The wire behind a narrow port: :class:`IntentPort` answers what a connection says,
whatever carries it; :mod:`bridge.transport.socket` carries it over the bridge's own
websocket-only Engine.IO v4 / Socket.IO v5 server (:mod:`bridge.transport.engineio_ws`,
:mod:`bridge.transport.socketio_server`); the fan-outs deliver room emits, on one process
or on every process sharing a Redis."""
