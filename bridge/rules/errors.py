"""The one exception the rules raise for a command they refuse."""

from __future__ import annotations


class RuleViolation(Exception):
    """A command the rules refuse; ``code`` is machine-readable, the message is for people."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
