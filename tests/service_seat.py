"""One session speaking to a :class:`~bridge.service.BridgeService` in the test's own
process: the intents a socket would hand over, without the wire in between."""

from __future__ import annotations

import itertools
from typing import Any

from bridge.service import BridgeService, Session

_ids = itertools.count(1)


class ServiceSeat:
    """``session`` at ``service``: every intent it sends carries a request id of its own
    unless the payload names one."""

    def __init__(self, service: BridgeService, session: Session) -> None:
        self.service = service
        self.session = session

    async def send(self, event: str, **payload: Any) -> dict[str, Any]:
        """The ack of ``event`` (ok or not)."""
        payload.setdefault("request_id", f"s{next(_ids)}")
        ack: dict[str, Any] = (await self.service.handle(self.session, event, payload)).ack
        return ack

    async def ok(self, event: str, **payload: Any) -> dict[str, Any]:
        """The data of ``event``'s ack, which must be ok."""
        ack = await self.send(event, **payload)
        assert ack["ok"], (event, payload, ack)
        data: dict[str, Any] = ack["data"]
        return data
