"""The daemon's log lines: one record, one line, whatever names a spool holds.

Job and daemon names, paths and messages come from a spool that producers write: a name with a
newline would forge log lines, a terminal escape would rewrite the screen of whoever reads the log.
:class:`EscapeFilter` escapes them in every record of the daemon's loggers (:func:`logger`) and of
the handlers of ``daemon run``: control, format and line-separator characters become ``\\n``,
``\\x1b``, ``\\u202e``...; an undecodable byte of a file name (a lone surrogate) becomes ``\\udcXX``.
A traceback keeps its lines, each indented, so that no line of it starts like a log record.
"""

from __future__ import annotations

import logging
import unicodedata

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # control, format (bidi overrides), surrogates, line/paragraph separators


def _char(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def escape(text: str) -> str:
    """``text`` with every character that could break or disguise a log line escaped."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(_char(c) if unicodedata.category(c) in _UNSAFE else c for c in text)


class EscapeFilter(logging.Filter):
    """Escapes a record's message (its arguments filled in) and indents its traceback."""

    _format = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: the handler reports it as it would
            return True
        record.msg, record.args = escape(message), None
        if record.exc_info and not record.exc_text:
            text = self._format.formatException(record.exc_info)
            record.exc_text = "\n".join("    " + escape(line) for line in text.split("\n"))
        return True


_FILTER = EscapeFilter()


def logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with its records escaped (for the daemon's modules)."""
    log = logging.getLogger(name)
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)
    return log


def escape_handlers(log: logging.Logger | None = None) -> None:
    """Escape every record the handlers of ``log`` (the root logger by default) write, whatever logger
    it comes from."""
    for h in (log or logging.getLogger()).handlers:
        if _FILTER not in h.filters:
            h.addFilter(_FILTER)


def log_setup() -> tuple[int, str, str | None] | None:
    """``(level, format, date format)`` of the root logger and its first handler: what a worker process
    needs to log as its daemon does (:func:`configure`); None when the root logger has no handler."""
    root = logging.getLogger()
    fmt = root.handlers[0].formatter if root.handlers else None
    text = getattr(fmt, "_fmt", None)  # the format string the Formatter was made with
    if not isinstance(text, str):
        return None
    return root.level, text, fmt.datefmt


def configure(setup: tuple[int, str, str | None] | None) -> None:
    """In a worker process: log records to stderr (the daemon's log) as :func:`log_setup` describes,
    escaped, Python's warnings among them; with None, leave logging as it is."""
    if setup is None:
        return
    import sys

    level, fmt, datefmt = setup
    logging.basicConfig(level=level, stream=sys.stderr, format=fmt, datefmt=datefmt)
    logging.captureWarnings(True)  # a job's warnings.warn: a record, not a bare line with its source line
    escape_handlers()
