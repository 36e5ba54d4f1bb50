"""Connections and binding nonces for a single bridge process (the SQLite default)."""

from __future__ import annotations


class LocalPresence:
    """In-process bookkeeping; a scale-out store keeps the same in Redis."""

    def __init__(self) -> None:
        self._present: dict[tuple[str, str], int] = {}
        # nonce -> (world, user, bound)
        self._nonces: dict[str, tuple[str, str, bool]] = {}

    async def add_presence(self, world_id: str, user_id: str, delta: int) -> None:
        key = (world_id, user_id)
        count = self._present.get(key, 0) + delta
        if count > 0:
            self._present[key] = count
        else:
            self._present.pop(key, None)

    async def is_present(self, world_id: str, user_id: str) -> bool:
        return self._present.get((world_id, user_id), 0) > 0

    async def put_nonce(self, world_id: str, user_id: str, nonce: str) -> None:
        self._nonces[nonce] = (world_id, user_id, False)

    async def bind_nonce(self, world_id: str, user_id: str, nonce: str) -> bool:
        found = self._nonces.get(nonce)
        if found is None or found[:2] != (world_id, user_id):
            return False
        self._nonces[nonce] = (world_id, user_id, True)
        return True

    async def nonce_bound(self, world_id: str, user_id: str, nonce: str) -> bool:
        return self._nonces.get(nonce) == (world_id, user_id, True)

    async def drop_nonce(self, world_id: str, nonce: str) -> None:
        found = self._nonces.get(nonce)
        if found is not None and found[0] == world_id:
            del self._nonces[nonce]
