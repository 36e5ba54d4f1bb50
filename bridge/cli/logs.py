"""No URL path, query or credentials in any log line, at any level.

A webhook's URL can be its secret (a Discord webhook's token is its path), and httpx
logs each request's URL at INFO, httpcore its traffic at DEBUG. The bridge's own lines
name a webhook by its id and its URL's scheme and host; :class:`RedactUrls`, on the
handlers, cuts every other URL in a line (its traceback too) to scheme, host and port.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TextIO

# scheme://[user[:password]@]host[:port], then what is cut: the path, query and fragment.
_URL = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
    r"(?:[^\s/?#@'\"<>]*@)?"
    r"(?P<host>[^\s/?#'\"<>]*)"
    r"(?P<rest>[/?#][^\s'\"<>]*)?"
)
CUT = "/\u2026"


def redact_urls(text: str) -> str:
    """``text`` with each URL cut to its scheme, host and port (and ``/…`` where it went on)."""

    def cut(match: re.Match[str]) -> str:
        rest = CUT if match.group("rest") and match.group("rest") != "/" else ""
        return f"{match.group('scheme')}{match.group('host')}{rest}"

    return _URL.sub(cut, text)


class RedactUrls(logging.Filter):
    """A handler's filter: the record's message and traceback with URLs cut."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_urls(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_urls(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_urls(record.stack_info)
        return True


# Loggers whose DEBUG lines carry stored secrets whole: aiosqlite logs each statement with
# its parameters (a webhook's URL and signing secret among them). INFO and up still show.
QUIETED = ("aiosqlite",)


def redact_urls_in_logs(logger: logging.Logger | None = None) -> None:
    """Put :class:`RedactUrls` on every handler of ``logger`` (the root's by default),
    which every logger's records reach: httpx's, httpcore's and the bridge's alike; and
    keep the :data:`QUIETED` loggers at INFO whatever the level."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactUrls) for f in handler.filters):
            handler.addFilter(RedactUrls())
    for name in QUIETED:
        quieted = logging.getLogger(name)
        quieted.setLevel(max(quieted.getEffectiveLevel(), logging.INFO))


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The environment variable that sets the level (WARNING unless set).
LOG_LEVEL_ENV = "FATE_BRIDGE_LOG"


def log_level() -> str:
    """The level the bridge logs at: ``FATE_BRIDGE_LOG`` (upper-cased), else WARNING."""
    return os.environ.get(LOG_LEVEL_ENV, "WARNING").upper()


def log_handler(stream: TextIO) -> logging.Handler:
    """A handler writing the bridge's log lines to ``stream``: its format, at
    :func:`log_level`, with every URL cut (:class:`RedactUrls`)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.setLevel(log_level())
    handler.addFilter(RedactUrls())
    return handler
