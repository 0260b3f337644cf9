"""What a CSV file is before pyarrow parses it: its separator, and how many rows it will decode to.

* The separator is told from the header and the first lines (:func:`choose_separator`): of comma,
  semicolon, tab and ``|``, the one that splits the header into more than one column and every
  following line into as many. A file that two of them split alike, or that the separator given
  leaves as one column while another splits it, is refused with one line naming what was seen: read
  with the wrong separator, a file becomes one column of text, which trains without an error into a
  model of no attributes.
* The rows are counted as line ends (:func:`count_lines`) before the values are decoded, so that the
  working memory of the decoded table can be bounded before it is spent (:mod:`hdp_plugin.data.limits`).
"""

from __future__ import annotations

import csv
import io

from ..errors import DataError, ParameterError
from ._files import UTF8_BOM

__all__ = ["SEPARATORS", "choose_separator", "count_lines", "separator_name", "separator_value"]

#: the separators told apart by :func:`choose_separator`, in the order they are tried
SEPARATORS = (",", ";", "\t", "|")
#: how many of the first lines are compared with the header
_SAMPLE_LINES = 100
#: how much of the start of the file (decompressed) is looked at
HEAD_BYTES = 1 << 16
#: the names a separator may be given by, besides the character itself
_NAMED = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}


def separator_name(sep: str) -> str:
    """A separator as a message names it: ``','``, ``';'``, ``tab``."""
    return "tab" if sep == "\t" else repr(sep)


def separator_value(value: str | None, label: str = "separator") -> str | None:
    """A separator as given (a character, or ``tab``/``\\t``, ``comma``, ``semicolon``, ``pipe``),
    checked: None, or the one character; :class:`ParameterError` naming ``label`` otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParameterError(f"{label} must be one character such as ',', ';', '|' or tab, got {value!r}")
    sep = _NAMED.get(value.lower(), value)
    if len(sep) != 1 or sep in "\"\r\n":
        raise ParameterError(f"{label} must be one character such as ',', ';', '|' or tab (not a quote or a "
                             f"line end), got {value!r}")
    return sep


def _field_counts(text: str, sep: str, drop_last: bool) -> list[int]:
    """The number of fields of each non-empty record of ``text`` split by ``sep`` (quotes respected),
    the header first; the last record left out when it may be cut short."""
    counts = []
    try:
        for rec in csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar='"', doublequote=True,
                              strict=False):
            if rec and not (len(rec) == 1 and rec[0] == ""):
                counts.append(len(rec))
            if len(counts) > _SAMPLE_LINES:
                break
    except csv.Error:
        return counts[:1]  # what cannot be split (a field beyond csv's limit): the header alone decides
    if drop_last and len(counts) > 1:
        counts.pop()
    return counts


def choose_separator(head: bytes, source: str, *, complete: bool, given: str | None = None) -> tuple[str, int]:
    """The separator of a CSV file from its first bytes ``head`` (``complete``: the whole file), and the
    number of columns of its header with that separator.

    Raises
    ------
    DataError
        When two separators split the first lines alike (name it), or when ``given`` leaves the header
        one column that another separator splits into several.
    """
    if head.startswith(UTF8_BOM):
        head = head[len(UTF8_BOM):]
    text = head.decode("utf-8", errors="replace")
    if not complete and "\n" in text:
        text = text[: text.rindex("\n") + 1]
    seps = SEPARATORS if given is None or given in SEPARATORS else (given, *SEPARATORS)
    counts = {s: _field_counts(text, s, drop_last=not complete) for s in seps}
    columns = {s: (c[0] if c else 1) for s, c in counts.items()}
    consistent = [s for s in SEPARATORS if columns[s] > 1 and all(n == columns[s] for n in counts[s])]
    splitting = [s for s in SEPARATORS if columns[s] > 1]
    if given is not None:
        others = [s for s in consistent + splitting if s != given]
        if columns[given] == 1 and others:
            s = others[0]
            raise DataError(
                f"{source}: read with the separator {separator_name(given)} its header is one column, but "
                f"{separator_name(s)} splits it into {columns[s]}; give --separator {_typed(s)}")
        return given, columns[given]
    if len(consistent) == 1:
        return consistent[0], columns[consistent[0]]
    if len(consistent) > 1:
        shown = " and ".join(f"{separator_name(s)} into {columns[s]}" for s in consistent)
        raise DataError(f"{source}: cannot tell its separator: {shown} columns split its first lines alike; "
                        "give the separator with --separator")
    if len(splitting) > 1:
        shown = " and ".join(f"{separator_name(s)} into {columns[s]}" for s in splitting)
        raise DataError(f"{source}: cannot tell its separator: {shown} columns split its header, and none "
                        "splits the lines below it alike; give the separator with --separator")
    if splitting:  # one separator splits the header: pyarrow names the line that disagrees with it
        return splitting[0], columns[splitting[0]]
    return ",", 1  # one column whatever the separator


def _typed(sep: str) -> str:
    """A separator as it is typed after --separator."""
    return "tab" if sep == "\t" else f"'{sep}'"


def count_lines(blocks) -> tuple[int, int]:
    """``(line ends, bytes)`` of the data in ``blocks`` (an iterable of bytes): the rows of a CSV file
    are at most its line ends, plus one for a last line without one."""
    lines = size = 0
    last = b"\n"
    for block in blocks:
        if block:
            lines += block.count(b"\n")
            size += len(block)
            last = block[-1:]
    return lines + (last != b"\n"), size
