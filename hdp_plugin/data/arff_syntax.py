"""ARFF's syntax (Weka's attribute-relation file format): the tokens, quoting and escapes, the header's
declarations (:func:`parse_header`) and Java's date patterns. :mod:`hdp_plugin.data.arff` reads the
``@data`` section with them; its docstring lists the syntax accepted.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path

from .. import config
from ..errors import DataError, TooLargeError
from ._columns import short
from .dataset import Attribute

__all__ = ["ArffAttribute", "ArffHeader", "java_date_format", "parse_date", "parse_header"]


#: Weka's whitespace: every control character and the space
_WS = "".join(map(chr, range(33)))
_WSC = r"\x00-\x20"  # the same, for character classes

_Q1 = r"'(?P<q1>(?:[^'\\]|\\.)*)'"
_Q2 = r'"(?P<q2>(?:[^"\\]|\\.)*)"'


def _field_re(stops: str) -> re.Pattern:
    """One value of a comma-separated list, ending at one of ``stops`` or the end of the line."""
    raw = rf"(?P<raw>[^{stops}'\"{_WSC}](?:[^{stops}]*[^{stops}{_WSC}])?)?"
    return re.compile(rf"[{_WSC}]*(?:{_Q1}|{_Q2}|{raw})[{_WSC}]*(?P<end>[{stops}]|$)")


_DATA_FIELD = _field_re(",%")
_LIST_FIELD = _field_re(",}%")
_SPARSE_ENTRY = re.compile(
    rf"[{_WSC}]*(?P<idx>[^{_WSC},{{}}%'\"]+)[{_WSC}]+"
    rf"(?:{_Q1}|{_Q2}|(?P<raw>[^,}}%'\"{_WSC}](?:[^,}}%]*[^,}}%{_WSC}])?))[{_WSC}]*(?P<end>[,}}])"
)
_NAME = re.compile(rf"[{_WSC}]*(?:{_Q1}|{_Q2}|(?P<raw>[^{_WSC}{{}}'\"%]+))")
_KEYWORD = re.compile(rf"[{_WSC}]*(@[A-Za-z]+)")
_WEIGHT = re.compile(rf"^(?P<head>.*?)[{_WSC}]*\{{[{_WSC}]*(?P<w>[^{{}}]*?)[{_WSC}]*\}}$", re.S)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[0-7]{1,3}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
_DATA_LINE = re.compile(rb"^[ \t]*@data(?![A-Za-z0-9_])", re.I | re.M)
_COMMENT_LINE = re.compile(rb"^[ \t]*%.*\n?", re.M)


class _Malformed(Exception):
    """A syntax error within one line; the caller adds the file and line number."""


class _TooMany(Exception):
    """A value list longer than the limit it was split with."""


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def sub(m: re.Match) -> str:
        s = m.group(1)
        if len(s) == 5 and s[0] == "u":
            return chr(int(s[1:], 16))
        if s[0] in "01234567":
            return chr(int(s, 8))
        return _ESCAPES.get(s, s)

    return _ESCAPE.sub(sub, text)


def _split(line: str, regex: re.Pattern, pos: int = 0,
           limit: int | None = None) -> tuple[list[str | None], str | None, str, int]:
    """Split a comma-separated list starting at ``pos`` (:class:`_TooMany` past ``limit`` values).

    Returns the values (``None`` for missing), the raw text of the last value if it was unquoted
    (else None), the character that ended the list (``","`` never; ``"%"``, ``"}"`` or ``""``) and the
    position after it.
    """
    out: list[str | None] = []
    while True:
        m = regex.match(line, pos)
        if m is None:
            raise _Malformed(f"malformed value at column {pos + 1}: {short(line[pos:pos + 40])} "
                             "(an unterminated quote, or text after a closing quote?)")
        q = m.group("q1")
        if q is None:
            q = m.group("q2")
        if q is not None:
            out.append(_unescape(q))
            last_raw = None
        else:
            raw = m.group("raw")
            last_raw = raw or ""
            out.append(None if raw is None or raw == "?" else raw)
        end = m.group("end")
        pos = m.end()
        if end != ",":
            return out, last_raw, end, pos
        if limit is not None and len(out) > limit:
            raise _TooMany()


# -- the header -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArffAttribute:
    """An ``@attribute`` declaration.

    ``kind`` is ``"nominal"``, ``"numeric"``, ``"string"`` or ``"date"``; ``values`` are a nominal
    attribute's labels; ``date_format`` is the strptime translation of a date attribute's pattern.
    """

    name: str
    kind: str
    values: tuple[str, ...] = ()
    date_format: str | None = None
    line: int = 0

    def attribute(self, labels: tuple[str, ...] | None = None) -> Attribute:
        """The :class:`Attribute` this declaration reads into (``labels`` for a string attribute)."""
        if self.kind in ("numeric", "date"):
            return Attribute(self.name, (), numeric=True, temporal="datetime" if self.kind == "date" else None)
        return Attribute(self.name, self.values if labels is None else labels)


@dataclass(frozen=True)
class ArffHeader:
    """A parsed ARFF header; ``data_line`` is the line number of the ``@data`` keyword."""

    relation: str
    attributes: tuple[ArffAttribute, ...]
    data_line: int


def _bad(source: str, line: int, msg: str) -> DataError:
    return DataError(f"{source}: line {line}: {msg}")


def _strip_comment(rest: str) -> str:
    """What is left of a header line after its value, which may only be blank or a comment."""
    rest = rest.strip(_WS)
    return "" if rest.startswith("%") else rest


def _name(text: str, pos: int) -> tuple[str, int] | None:
    m = _NAME.match(text, pos)
    if m is None:
        return None
    q = m.group("q1")
    if q is None:
        q = m.group("q2")
    return (_unescape(q) if q is not None else m.group("raw")), m.end()


class _HeaderMemory:
    """The memory a header's declarations will take while the file is read, counted as they are parsed:
    ``config.HEADER_BYTES_PER_ATTRIBUTE`` an attribute and ``config.HEADER_BYTES_PER_LABEL`` a label,
    plus their text; :class:`~hdp_plugin.errors.TooLargeError` beyond ``limit`` bytes."""

    def __init__(self, limit: int | None, limit_name: str, source: str):
        self.limit, self.limit_name, self.source = limit, limit_name, source
        self.used = self.n_attributes = self.n_labels = 0

    def labels_left(self) -> int | None:
        """How many more labels of no text fit (None: no limit)."""
        if self.limit is None:
            return None
        return max(0, (self.limit - self.used) // config.HEADER_BYTES_PER_LABEL)

    def charge(self, lineno: int, name: str, n_labels: int, text: str) -> None:
        """Count an attribute ``name`` of ``n_labels`` labels whose text is at most ``text``'s."""
        self.n_attributes += 1
        self.n_labels += n_labels
        chars = len(name) + len(text)
        self.used += (config.HEADER_BYTES_PER_ATTRIBUTE + n_labels * config.HEADER_BYTES_PER_LABEL
                      + (chars if text.isascii() and name.isascii() else 4 * chars))
        if self.limit is not None and self.used > self.limit:
            self.refuse(lineno, name)

    def refuse(self, lineno: int, name: str, more: bool = False) -> None:
        def mib(n: int) -> str:
            return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n / 2**10:,.0f} KiB"

        raise TooLargeError(
            f"{self.source}: line {lineno}: the header's {self.n_attributes:,} attributes and "
            f"{'more than ' if more else ''}{self.n_labels:,} labels through attribute {name!r} would take "
            f"{'more than ' if more else 'about '}{mib(max(self.used, self.limit))} of memory to read, more than "
            f"the limit of {mib(self.limit)} ({self.limit_name}); declare fewer attributes or labels, or raise "
            "--max-input-mb")


def parse_header(text: str, source: str, max_cardinality: int | None = None, *, max_memory: int | None = None,
                 memory_limit_name: str = "max_memory") -> ArffHeader:
    """Parse the header of an ARFF file, up to and including the ``@data`` line.

    Parameters
    ----------
    text : str
        The start of the file, at least through the ``@data`` line.
    source : str
        The file name, for error messages.
    max_cardinality : int, optional
        Refuse (:class:`~hdp_plugin.errors.TooLargeError`) a nominal attribute declaring more values,
        as soon as its value list is split that far.
    max_memory : int, optional
        Refuse (:class:`~hdp_plugin.errors.TooLargeError`) a header whose declarations, all together,
        would take more bytes than this while the file is read
        (``hdp_plugin.config.HEADER_BYTES_PER_ATTRIBUTE`` an attribute and
        ``hdp_plugin.config.HEADER_BYTES_PER_LABEL`` a label, plus their text), as soon as they are
        split that far; ``memory_limit_name`` names the limit in the message.

    Returns
    -------
    ArffHeader

    Raises
    ------
    DataError
        Naming the line of a malformed declaration, or if there is no ``@data`` line.
    """
    relation = Path(source).stem if source else "data"
    attrs: list[ArffAttribute] = []
    seen: dict[str, int] = {}
    if max_memory is not None:  # value lists without quotes are counted before any is split
        _prescan(text, _HeaderMemory(max_memory, memory_limit_name, source))
    memory = _HeaderMemory(max_memory, memory_limit_name, source)
    for lineno, line in enumerate(_lines(text), start=1):
        s = line.strip(_WS)
        if not s or s[0] == "%":
            continue
        m = _KEYWORD.match(line)
        kw = m.group(1).lower() if m else None
        if kw == "@relation":
            got = _name(line, m.end())
            if got is not None:
                relation = got[0]
        elif kw == "@attribute":
            a = _parse_attribute(line, m.end(), lineno, source, max_cardinality, memory)
            if a.name in seen:
                raise _bad(source, lineno, f"attribute {a.name!r} is declared twice (first on line {seen[a.name]})")
            seen[a.name] = lineno
            attrs.append(a)
        elif kw == "@data":
            if _strip_comment(line[m.end():]):
                raise _bad(source, lineno, "unexpected text after @data (data rows start on the next line)")
            if not attrs:
                raise _bad(source, lineno, "@data before any @attribute declaration")
            return ArffHeader(relation, tuple(attrs), lineno)
        elif kw == "@end":
            raise _bad(source, lineno, "@end outside a relational attribute")
        else:
            what = "@relation, @attribute or @data" if not attrs else "@attribute or @data"
            raise _bad(source, lineno, f"expected {what}, got {short(s)}; is this an ARFF file?")
    raise DataError(f"{source}: no @data line; is this an ARFF file?")


def _prescan(text: str, memory: _HeaderMemory) -> None:
    """Charge ``memory`` with every attribute of the header and the labels of its value lists that have no
    quote (:func:`_plain_list`, counted without splitting them): a header too large for it is refused
    before any of its lists is split."""
    for lineno, line in enumerate(_lines(text), start=1):
        m = _KEYWORD.match(line)
        if m is None:
            continue
        kw = m.group(1).lower()
        if kw == "@data":
            return
        got = _name(line, m.end()) if kw == "@attribute" else None
        if got is None:
            continue
        rest = line[got[1]:].lstrip(_WS)
        plain = _plain_list(rest) if rest.startswith("{") else None
        if plain is None:
            memory.charge(lineno, got[0], 0, "")
        else:
            memory.charge(lineno, got[0], plain[1], rest[1:plain[0]])


def _lines(text: str):
    """The lines of ``text`` one at a time (a header's lines are not all copied at once)."""
    pos, end = 0, len(text)
    while pos <= end:
        nl = text.find("\n", pos)
        if nl < 0:
            yield text[pos:]
            return
        yield text[pos:nl]
        pos = nl + 1


def _plain_list(rest: str) -> tuple[int, int] | None:
    """``(position of the closing brace, number of values)`` of a value list at the start of ``rest`` with
    no quote and no comment in it (values split at commas, as :func:`_split` splits them), else None."""
    close = rest.find("}")
    if close < 0 or "'" in rest or '"' in rest or "%" in rest[:close]:
        return None
    n = rest.count(",", 1, close) + 1
    last = rest.rfind(",", 1, close)
    if not rest[last + 1 if last >= 0 else 1:close].strip(_WS):
        n -= 1  # `{a, b,}` and `{}`: no value after the last comma
    return close, n


def _parse_attribute(line: str, pos: int, lineno: int, source: str, max_values: int | None = None,
                     memory: _HeaderMemory | None = None) -> ArffAttribute:
    got = _name(line, pos)
    if got is None:
        raise _bad(source, lineno, f"bad @attribute line (expected a name and a type): {short(line.strip(_WS))}")
    name, pos = got
    rest = line[pos:].lstrip(_WS)
    if rest.startswith("{"):
        plain = _plain_list(rest)
        if plain is not None:  # counted before it is split
            close, n = plain
            if max_values is not None and n > max_values:
                from .limits import check_cardinality

                check_cardinality(name, n, max_values, source, where=f"line {lineno}: ")
            if memory is not None:
                memory.charge(lineno, name, n, rest[1:close])
                memory = None
            parts = [v.strip(_WS) for v in rest[1:close].split(",")]
            values: list[str | None] = [None if v == "" or v == "?" else v for v in parts]
            last_raw, end, after = parts[-1], "}", close + 1
        else:
            limit = None if max_values is None else max_values + 1
            left = None if memory is None else memory.labels_left()
            by_memory = left is not None and (limit is None or left < limit)
            try:
                values, last_raw, end, after = _split(rest, _LIST_FIELD, 1, left if by_memory else limit)
            except _Malformed as e:
                raise _bad(source, lineno, f"bad value list of attribute {name!r}: {e}") from None
            except _TooMany:
                if not by_memory:
                    from .limits import check_cardinality

                    check_cardinality(name, max_values + 1, max_values, source, where=f"line {lineno}: ")
                memory.n_attributes += 1
                memory.n_labels += left
                memory.used = memory.limit
                memory.refuse(lineno, name, more=True)
        if end != "}":
            raise _bad(source, lineno, f"value list of attribute {name!r} has no closing '}}'")
        if _strip_comment(rest[after:]):
            raise _bad(source, lineno, f"unexpected text after the value list of attribute {name!r}: "
                       f"{short(rest[after:].strip(_WS))}")
        if values and values[-1] is None and last_raw == "":
            values.pop()  # `{a, b}` and `{a, b,}` alike; `{}` declares no value
        if memory is not None:
            memory.charge(lineno, name, len(values), rest[1:after])
        labels: list[str] = []
        for v in values:
            if v is None:
                raise _bad(source, lineno, f"empty value in the value list of attribute {name!r}")
            labels.append(v)
        del values
        if len(set(labels)) != len(labels):
            dup = next(v for v in labels if labels.count(v) > 1)
            raise _bad(source, lineno, f"value {dup!r} is declared twice for attribute {name!r}")
        return ArffAttribute(name, "nominal", tuple(labels), line=lineno)
    if memory is not None:
        memory.charge(lineno, name, 0, "")
    m = re.match(rf"([^{_WSC}%]+)", rest)
    if m is None:
        raise _bad(source, lineno, f"bad @attribute line: attribute {name!r} has no type")
    kind = m.group(1).lower()
    tail = rest[m.end():]
    if kind in ("numeric", "integer", "real", "string"):
        if _strip_comment(tail):
            raise _bad(source, lineno, f"unexpected text after the type of attribute {name!r}: "
                       f"{short(tail.strip(_WS))}")
        return ArffAttribute(name, "string" if kind == "string" else "numeric", line=lineno)
    if kind == "date":
        fmt = "yyyy-MM-dd'T'HH:mm:ss"
        if _strip_comment(tail):
            got = _name(tail, 0)
            if got is None or _strip_comment(tail[got[1]:]):
                raise _bad(source, lineno, f"bad date format of attribute {name!r}: {short(tail.strip(_WS))}")
            fmt = got[0]
        try:
            pyfmt = java_date_format(fmt)
        except ValueError as e:
            raise _bad(source, lineno, f"date format {fmt!r} of attribute {name!r}: {e}") from None
        return ArffAttribute(name, "date", date_format=pyfmt, line=lineno)
    if kind == "relational":
        raise _bad(source, lineno, f"attribute {name!r} is relational, which is not supported")
    raise _bad(source, lineno, f"unknown type {short(m.group(1))} of attribute {name!r} "
               "(expected numeric, integer, real, string, date or {...})")


# -- dates ------------------------------------------------------------------------------------
_JAVA_FIELDS = {
    "y": {1: "%Y", 2: "%y", 4: "%Y"}, "M": {1: "%m", 2: "%m", 3: "%b", 4: "%B"},
    "d": {1: "%d", 2: "%d"}, "H": {1: "%H", 2: "%H"}, "h": {1: "%I", 2: "%I"},
    "m": {1: "%M", 2: "%M"}, "s": {1: "%S", 2: "%S"}, "S": {3: "%f"}, "a": {1: "%p"},
    "E": {3: "%a", 4: "%A"}, "D": {1: "%j", 2: "%j", 3: "%j"}, "Z": {1: "%z"},
    "X": {1: "%z", 2: "%z", 3: "%z"}, "z": {1: "%Z", 2: "%Z", 3: "%Z"},
}
_EPOCH = _dt.datetime(1970, 1, 1)
_MS = _dt.timedelta(milliseconds=1)


def java_date_format(pattern: str) -> str:
    """Translate a Java ``SimpleDateFormat`` pattern into a :func:`~datetime.datetime.strptime` one.

    Raises
    ------
    ValueError
        For a pattern letter with no strptime equivalent.
    """
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            if j == i + 1:  # '' is a literal quote
                out.append("'")
                i += 2
                continue
            if j < 0:
                raise ValueError("unterminated quoted text")
            out.append(pattern[i + 1:j].replace("%", "%%"))
            i = j + 1
            continue
        if c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            n = j - i
            table = _JAVA_FIELDS.get(c)
            if table is None:
                raise ValueError(f"pattern letter {c!r} is not supported")
            fmt = table.get(n) or (table[max(table)] if n > max(table) and c not in "S" else None)
            if fmt is None:
                raise ValueError(f"{c * n!r} is not supported")
            out.append(fmt)
            i = j
            continue
        out.append("%%" if c == "%" else c)
        i += 1
    return "".join(out)


def parse_date(text: str, fmt: str) -> float:
    """Milliseconds since 1970-01-01 UTC of ``text`` in strptime format ``fmt`` (ValueError if bad)."""
    d = _dt.datetime.strptime(text, fmt)
    if d.tzinfo is not None:
        return float((d - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)) // _MS)
    return float((d - _EPOCH) // _MS)


# -- converting a block of tokens to codes ------------------------------------------------------
