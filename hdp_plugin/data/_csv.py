"""What a CSV file is before pyarrow parses it: its separator, and how many rows it will decode to.

* The separator is told from the header and the first lines (:func:`choose_separator`): of comma,
  semicolon, tab and ``|``, the one that splits the header into more than one column and every
  following line into as many. A file that two of them split alike, or that the separator given
  leaves as one column while another splits it, is refused with one line naming what was seen: read
  with the wrong separator, a file becomes one column of text, which trains without an error into a
  model of no attributes.
  A header that no supported separator splits, while another character splits it and the lines
  below alike (``:``, a space), is refused naming that character: read as one column it would train a
  model of no attributes.
* The first bytes looked at hold the whole header line however long it is (:func:`read_head`), and
  pyarrow's blocks are made large enough for it and for the longest line seen (:func:`block_size`):
  a block must hold the header and every row whole.
* A decimal comma (:func:`decimal_value`, :func:`choose_decimal`): in a ``;``-separated file,
  text columns whose every value is a number written with a decimal comma (``14,23``) are numbers,
  read so; a column that mixes such numbers with other text, or a file that writes numbers both
  ways, is refused naming the column; with any other separator such a column is refused too (a
  decimal comma or a thousands separator?). Read as text, numbers train without an error into a
  model of labels.
* The rows are counted as line ends (:func:`count_lines`) before the values are decoded, so that the
  working memory of the decoded table can be bounded before it is spent (:mod:`hdp_plugin.data.limits`).
"""

from __future__ import annotations

import csv
import io

import numpy as np

from ..errors import DataError, ParameterError
from ._files import UTF8_BOM

__all__ = ["DECIMALS", "SEPARATORS", "block_size", "check_decimal_comma", "check_decimal_point", "choose_decimal",
           "choose_separator", "count_lines", "decimal_value", "read_head", "separator_name", "separator_value"]

#: the separators told apart by :func:`choose_separator`, in the order they are tried
SEPARATORS = (",", ";", "\t", "|")
#: how many of the first lines are compared with the header
_SAMPLE_LINES = 100
#: how much of the start of the file (decompressed) is looked at
HEAD_BYTES = 1 << 16
#: the names a separator may be given by, besides the character itself
_NAMED = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
#: characters other files are separated by, looked for when none of :data:`SEPARATORS` splits the header
_OTHER_SEPARATORS = ": #!^~@$%&*=+\\/\x01\x1e\x1f"
#: the decimal separators of numbers in a CSV file
DECIMALS = (".", ",")
_NAMED_DECIMALS = {"point": ".", "dot": ".", "period": ".", "comma": ","}
#: pyarrow's smallest block (its default); a block holds the header and every row whole
MIN_BLOCK = 1 << 20
#: pyarrow's largest block (an int32)
MAX_BLOCK = (1 << 31) - 1


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


def decimal_value(value: str | None, label: str = "decimal") -> str | None:
    """A decimal separator as given (``.`` or ``,``, or ``point``/``comma``), checked: None (told from
    the file), or the character; :class:`ParameterError` naming ``label`` otherwise."""
    if value is None:
        return None
    dec = _NAMED_DECIMALS.get(value.lower(), value) if isinstance(value, str) else value
    if dec not in DECIMALS:
        raise ParameterError(f"{label} must be '.' or ',' (the decimal separator of a CSV file's numbers), "
                             f"got {value!r}")
    return dec


def read_head(blocks) -> tuple[bytes, bool]:
    """The first bytes of a CSV file from ``blocks`` (its decompressed bytes, whole or an iterable of
    blocks): its header line whole, however long, and :data:`HEAD_BYTES` beyond it; and whether that
    is the whole file."""
    if isinstance(blocks, (bytes, bytearray)):
        nl = blocks.find(b"\n")
        end = len(blocks) if nl < 0 else nl + 1 + HEAD_BYTES
        return bytes(blocks[: end + 1]), end >= len(blocks)
    buf = bytearray()
    it = iter(blocks)
    for block in it:
        buf += block
        nl = buf.find(b"\n")
        if nl >= 0 and len(buf) > nl + 1 + HEAD_BYTES:
            close = getattr(it, "close", None)
            if close is not None:
                close()
            return bytes(buf[: nl + 1 + HEAD_BYTES + 1]), False
    return bytes(buf), True


def block_size(head: bytes, least: int = MIN_BLOCK) -> int:
    """A block size for pyarrow's CSV reader that holds the header and the longest line of ``head``
    whole, with room to spare: at least ``least``, at most pyarrow's largest (:data:`MAX_BLOCK`)."""
    ends = np.flatnonzero(np.frombuffer(head, dtype=np.uint8) == 0x0A)
    bounds = np.concatenate(([-1], ends, [len(head) - 1]))
    longest = int(np.diff(bounds).max()) if len(head) else 0
    size = max(least, 4 * longest)
    return min(size, MAX_BLOCK)


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
    header = text.split("\n", 1)[0]
    for s in dict.fromkeys(c for c in _OTHER_SEPARATORS if c in header):
        c = _field_counts(text, s, drop_last=not complete)
        if len(c) > 1 and c[0] > 1 and all(n == c[0] for n in c):
            raise DataError(
                f"{source}: no separator found: none of ',', ';', tab and '|' splits its header, but "
                f"{separator_name(s)} splits it and the lines below into {c[0]} columns; give --separator "
                f"{_typed(s)} (separator={s!r} in Python)")
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


# -- the decimal comma ----------------------------------------------------------------------------------
#: a number with a decimal comma (one comma), as pyarrow reads it with ``decimal_point=","``
_COMMA_NUMBER = r"^\s*[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?\s*$"
#: a number with a decimal point, as pyarrow reads it by default
_POINT_NUMBER = r"^\s*[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?\s*$"
_INTEGER = r"^\s*[+-]?\d+\s*$"


def _text_columns(table):
    import pyarrow as pa

    for name, col in zip(table.column_names, table.columns):
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            yield str(name), col


def _numbers_in(col, mark: str, pattern: str):
    """``(values, numbers, integers, a number, a value that is neither)`` of a text column: its values,
    how many are numbers of ``pattern`` and how many integers (a column whose values hold no ``mark``
    holds no such number: not looked at further)."""
    import pyarrow.compute as pc

    values = len(col) - col.null_count
    if not values or not pc.any(pc.match_substring(col, mark)).as_py():
        return values, 0, 0, None, None
    number = pc.match_substring_regex(col, pattern)
    integer = pc.match_substring_regex(col, _INTEGER)
    n_number = pc.sum(number).as_py() or 0
    n_integer = pc.sum(integer).as_py() or 0
    if not n_number:
        return values, 0, n_integer, None, None
    example = pc.filter(col, number)[0].as_py()
    other = pc.filter(col, pc.invert(pc.or_(number, integer)))
    return values, n_number, n_integer, example, (other[0].as_py() if len(other) else None)


def _comma_columns(table):
    """``(numbers, mixed)``: the text columns whose every value is a number with a decimal comma (or an
    integer), as ``(name, example)``; and those mostly of such numbers but for some other text, as
    ``(name, example, other)``."""
    numbers, mixed = [], []
    for name, col in _text_columns(table):
        values, n_comma, n_int, example, other = _numbers_in(col, ",", _COMMA_NUMBER)
        if not n_comma:
            continue
        if n_comma + n_int == values:
            numbers.append((name, example))
        elif 2 * (n_comma + n_int) > values:
            mixed.append((name, example, other))
    return numbers, mixed


def _short(value) -> str:
    from ._columns import short

    return short(value, 40)


def choose_decimal(table, sep: str, source: str) -> list[tuple[str, str]]:
    """The text columns of a CSV file read with a decimal point into ``table`` that hold numbers with a
    decimal comma, as ``(name, example)``, when it is ``;``-separated: if any, the file is to be read
    with a decimal comma (:func:`check_decimal_comma` checks it so read); none otherwise.

    Raises
    ------
    DataError
        Naming a column of a ``;``-separated file that mixes numbers with a decimal comma and other
        text, or a column of a file separated otherwise whose values are all numbers written with a
        comma (a decimal comma, or a comma that separates thousands?).
    """
    numbers, mixed = _comma_columns(table)
    if sep == ";":
        if mixed:
            name, example, other = mixed[0]
            raise DataError(
                f"{source}: column {name!r} holds numbers with a decimal comma ({_short(example)}) and text "
                f"({_short(other)}): correct the text, or give --decimal . to read the column as text "
                "(decimal='.' in Python)")
        return numbers
    if numbers:
        name, example = numbers[0]
        raise DataError(
            f"{source}: column {name!r} holds numbers written with a comma ({_short(example)}): give --decimal , "
            "to read them as numbers with a decimal comma, or --decimal . to read the column as text "
            "(decimal=',' or '.' in Python)")
    return []


def check_decimal_comma(numbers: list[tuple[str, str]], schema, table, source: str) -> None:
    """Check ``table``, a CSV file read with a decimal comma after :func:`choose_decimal` found the
    columns ``numbers`` in it read with a decimal point (whose schema was ``schema``):
    :class:`DataError` naming a column that holds numbers with a decimal point (read now as text) or
    one whose decimal commas did not read as numbers."""
    import pyarrow as pa

    name, example = numbers[0]
    texts = dict(_text_columns(table))
    for a, ex in numbers:
        if a in texts:
            raise DataError(f"{source}: column {a!r} holds numbers with a decimal comma ({_short(ex)}) that do not "
                            "read as numbers; give --decimal . to read it as text (decimal='.' in Python)")
    for f in schema:
        if (pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)) and str(f.name) in texts:
            col = texts[str(f.name)].drop_null()
            shown = _short(col[0].as_py()) if len(col) else "its values"
            raise DataError(
                f"{source}: column {str(f.name)!r} writes numbers with a decimal point ({shown}) and column "
                f"{name!r} with a decimal comma ({_short(example)}); give --decimal . or --decimal , "
                "(decimal= in Python) to say which numbers are meant")


def check_decimal_point(table, source: str) -> None:
    """:class:`DataError` naming a column of ``table`` (a CSV file read with a decimal comma, as asked)
    whose values are all numbers with a decimal point: they read as text."""
    for name, col in _text_columns(table):
        values, n_point, n_int, example, _ = _numbers_in(col, ".", _POINT_NUMBER)
        if n_point and n_point + n_int == values:
            raise DataError(f"{source}: column {name!r} holds numbers with a decimal point ({_short(example)}), "
                            "which read as text with --decimal ,; give --decimal . or leave it out "
                            "(decimal= in Python)")
