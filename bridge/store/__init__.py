"""Persistence behind one interface (:class:`bridge.store.base.Store`)."""

from bridge.store.base import (
    AlreadyAnswered,
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
    "AlreadyAnswered",
    "CommitBatch",
    "EmitRow",
    "EventRow",
    "Snapshot",
    "Store",
    "VersionConflict",
    "WorldExists",
    "WorldRecord",
]
