"""Persistence behind one interface (:class:`bridge.store.base.Store`)."""

from bridge.store.base import (
    CommitBatch,
    EmitRow,
    EventRow,
    Snapshot,
    Store,
    VersionConflict,
    WorldExists,
    WorldRecord,
)

__all__ = [
    "CommitBatch",
    "EmitRow",
    "EventRow",
    "Snapshot",
    "Store",
    "VersionConflict",
    "WorldExists",
    "WorldRecord",
]
