"""Weka-style value labels of a discretised attribute: ``(-inf-a]``, ``(a-b]``, ``(b-inf)``, ``All``.

Weka 3.8 prints each cut point with ``Utils.doubleToString(x, 6)``, a ``java.text.DecimalFormat``
with at most six fraction digits, ``HALF_UP`` rounding, no grouping and no trailing zeros;
:func:`weka_number` reproduces it. Weka wraps each label in single quotes inside the value itself
(``'(-inf-0.5]'``); the labels here leave those quotes out.
"""

from __future__ import annotations

import functools
import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, localcontext

#: Weka's default ``binRangePrecision``
DEFAULT_PRECISION = 6

#: the label of the one value of an attribute without cut points
ALL_LABEL = "All"


def _java_pads_digit(shortest: Decimal, x: float) -> bool:
    """True when ``Double.toString(x)`` is ``"d.0E<n>"``: one significant digit, in scientific
    notation (Java uses it below 1e-3 and from 1e7 on). ``DecimalFormat`` then counts the ``0`` as
    a digit after the tie and rounds up, whatever the exact binary value (e.g. ``5e-7`` -> ``"0.000001"``)."""
    return len(shortest.normalize().as_tuple().digits) == 1 and not (1e-3 <= abs(x) < 1e7)


def weka_number(x: float, precision: int = DEFAULT_PRECISION) -> str:
    """Format ``x`` as Weka's ``Utils.doubleToString(x, precision)`` does.

    Java's ``DecimalFormat`` rounds the shortest decimal representation of the double
    (``Double.toString``'s digits) half-up to ``precision`` fraction digits; when those digits
    end exactly on a tie it decides on the exact binary value. Trailing zeros and a trailing
    point are dropped, so ``2.0`` is ``"2"`` and ``-1e-9`` is ``"-0"``.

    Checked against Weka 3.8.6 on Java 17 for 12,000 numbers: identical below ``1e16`` in
    magnitude. From there on Java 17's ``Double.toString`` may print more digits than the
    shortest representation, and the last digits of such huge numbers can differ.

    Parameters
    ----------
    x : float
        The number.
    precision : int
        Maximum number of fraction digits.

    Returns
    -------
    str

    Examples
    --------
    >>> weka_number(0.0005), weka_number(1.0000004), weka_number(2.0), weka_number(1234.5678901)
    ('0.0005', '1', '2', '1234.56789')
    """
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    shortest = repr(x)
    if "e" not in shortest:
        point = shortest.index(".")
        if len(shortest) - point - 1 <= precision:
            # no rounding to do: the shortest digits are the answer (most cut points, which are midpoints
            # of data values); a fit labels thousands of them, so the cheapest path comes first
            return shortest.rstrip("0").rstrip(".")
        rounded = _rounded_digits(x, shortest, point, precision)
        if rounded is not None:
            return rounded
    return _weka_number_rounded(x, precision)


def _rounded_digits(x: float, shortest: str, point: int, precision: int) -> str | None:
    """:func:`weka_number` of the double ``x`` whose shortest digits ``shortest`` (``repr``, no exponent,
    the point at ``point``) have more than ``precision`` fraction digits: rounded half-up on those
    digits as strings, a tie decided by the exact binary value in integers (as the Decimal path does);
    None where the answer needs the Decimal path (one significant digit: :func:`_java_pads_digit`)."""
    negative = shortest[0] == "-"
    whole = shortest[1 if negative else 0:point]
    frac = shortest[point + 1:]
    rest = frac[precision:]
    if len((whole + frac).strip("0")) <= 1:
        return None
    digits = whole + frac[:precision]
    if rest == "5":  # the shortest digits sit on the tie D + 1/2: up (away from zero) unless |x| < it
        num, den = abs(x).as_integer_ratio()
        up = num * 2 * 10 ** precision >= (2 * int(digits) + 1) * den
    else:  # above the tie (a 5 followed by more digits, or 6-9) or below it
        up = rest[0] >= "5"
    if up:
        digits = str(int(digits) + 1).rjust(len(digits), "0")
    head, tail = digits[:len(digits) - precision], digits[len(digits) - precision:].rstrip("0")
    head = head.lstrip("0") or "0"
    text = f"{head}.{tail}" if tail else head
    return "-" + text if negative else text


def _weka_number_rounded(x: float, precision: int) -> str:
    """:func:`weka_number` of a finite ``x`` by Decimal arithmetic, rounding and ties included."""
    with localcontext() as ctx:
        ctx.prec = 1100  # enough for every double written out in full
        quantum = Decimal(1).scaleb(-precision)
        shortest = Decimal(repr(x))
        tail = abs(shortest - shortest.quantize(quantum, rounding=ROUND_DOWN))
        if tail == quantum / 2 and not _java_pads_digit(shortest, x):
            # the shortest digits sit on a tie: the exact binary value decides
            rounded = Decimal(x).quantize(quantum, rounding=ROUND_HALF_UP)
        else:
            rounded = shortest.quantize(quantum, rounding=ROUND_HALF_UP)
        text = format(rounded, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


@functools.lru_cache(maxsize=1 << 16)
def _cached_number(x: float, precision: int) -> str:
    return weka_number(x, precision)


def _cut_number(x: float, precision: int) -> str:
    """:func:`weka_number`, remembered: an ensemble's members cut at the same candidate points (the
    midpoints of a column's values), so most labels repeat from member to member (segment-challenge:
    about 2,500 numbers a fit). Zero is not remembered (``0.0 == -0.0`` would share an entry)."""
    return _cached_number(x, precision) if x != 0.0 else weka_number(x, precision)


def _labels(numbers: list[str]) -> tuple[str, ...]:
    n = len(numbers)
    return tuple(
        f"(-inf-{numbers[0]}]" if j == 0
        else f"({numbers[n - 1]}-inf)" if j == n
        else f"({numbers[j - 1]}-{numbers[j]}]"
        for j in range(n + 1)
    )


def interval_labels(cut_points, precision: int = DEFAULT_PRECISION) -> tuple[str, ...]:
    """Labels of the ``len(cut_points) + 1`` bins, as Weka names them (without its quotes).

    Parameters
    ----------
    cut_points : sequence of float
        Ascending cut points.
    precision : int
        Fraction digits of the numbers in the labels (Weka's ``binRangePrecision``, 6).

    Returns
    -------
    tuple of str
        ``("All",)`` without cut points; otherwise ``("(-inf-a]", "(a-b]", ..., "(z-inf)")``.
        When two cut points would print the same at ``precision`` digits (they are closer than
        ``10**-precision``), more digits are used for that attribute, up to the shortest
        representation that tells every cut point apart; Weka would print the same number twice.

    Examples
    --------
    >>> interval_labels([0.5, 2.25])
    ('(-inf-0.5]', '(0.5-2.25]', '(2.25-inf)')
    >>> interval_labels([])
    ('All',)
    """
    cut_points = [float(c) for c in cut_points]
    if not cut_points:
        return (ALL_LABEL,)
    for p in range(precision, 18):
        numbers = [_cut_number(c, p) for c in cut_points]
        if len(set(numbers)) == len(numbers):
            return _labels(numbers)
    return _labels([repr(c) for c in cut_points])
