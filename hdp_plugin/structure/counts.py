"""Sufficient statistics of structure learning: one counting pass, then MI and CMI.

One pass over the integer codes (docs/method.md section 2) counts n(y), n(x_i, y) and
n(x_i, x_j, y) for every pair of attributes. The rows are streamed in blocks of
:data:`hdp_plugin.config.ROW_BLOCK` (views of ``X``, never copies) and accumulated into the count
arrays, so the data's size does not matter; the count arrays' size does.

Memory limit
------------
The pair table has one int64 cell per (x_i, x_j, y) for every ``i < j``::

    8 * C * sum_{i<j} |X_i| |X_j|  bytes  =  4 * C * ((sum |X_i|)^2 - sum |X_i|^2)

plus an ``n x n`` offset matrix and the ``n x n`` CMI matrix (8 bytes a cell each). With
|X_i| counting the missing-value slot: 20 attributes of 5 codes and 3 classes need 57 kB;
200 attributes of 10 codes and 2 classes 32 MB; 1,000 attributes of 10 codes and 2 classes
about 800 MB, which is where this design stops being reasonable on an ordinary machine (and the
O(n^2) pair loop per row makes the pass slow too). Beyond that, pairs would have to be counted in
groups over several passes. :func:`pair_table_bytes` gives the table's figure and
:func:`pairwise_bytes` that of everything pairwise (the table, the offsets and the CMI matrix)
before anything is allocated; :func:`count_statistics` refuses them above ``max_bytes``, or above
what the working memory in force leaves (:mod:`hdp_plugin.runtime.memory`: ``hdp-bnc`` and the daemon bound
it by ``--max-input-mb``, every set of statistics alive at once counted)
(:class:`~hdp_plugin.errors.TooLargeError`, saying what to lower). Naive Bayes (and kDB-0) needs
no pairs: ``pairs=False`` counts n(y) and n(x_i, y) only, in memory linear in the attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import config

from ..runtime import cancel, memory
from ..runtime.threads import map_parts, row_parts
from ..errors import DataError, ParameterError, TooLargeError
from . import count_kernels

#: refuse pair tables larger than this by default (bytes)
DEFAULT_MAX_PAIR_BYTES = config.MAX_PAIR_BYTES


@dataclass(frozen=True, eq=False)
class CountStatistics:
    """n(y), n(x_i, y) and n(x_i, x_j, y) of a data set, in flat arrays.

    Attributes
    ----------
    n_rows : int
        Number of rows counted.
    n_classes : int
        Number of classes C.
    cardinalities : ndarray of shape (n_attributes,), int64
        Codes per attribute, the missing slot included.
    n_y : ndarray of shape (C,), int64
        Class counts.
    n_xy : ndarray, int64
        Flat: ``n_xy[xy_offsets[i] + x * C + y]`` = n(x_i = x, y).
    xy_offsets : ndarray of shape (n_attributes + 1,), int64
        Start of each attribute's block in ``n_xy``.
    n_xxy : ndarray, int64
        Flat: ``n_xxy[pair_offsets[i, j] + (xi * |X_j| + xj) * C + y]`` = n(x_i, x_j, y), ``i < j``.
    pair_offsets : ndarray of shape (n_attributes, n_attributes), int64
        Start of each pair's block in ``n_xxy`` (``-1`` on and below the diagonal). Both are empty,
        and :attr:`has_pairs` False, when the pairs were not counted (``pairs=False``).

    Use :meth:`xy` and :meth:`xxy` for shaped views.
    """

    n_rows: int
    n_classes: int
    cardinalities: np.ndarray
    n_y: np.ndarray
    n_xy: np.ndarray
    xy_offsets: np.ndarray
    n_xxy: np.ndarray
    pair_offsets: np.ndarray

    @property
    def n_attributes(self) -> int:
        return int(self.cardinalities.shape[0])

    @property
    def has_pairs(self) -> bool:
        """Whether n(x_i, x_j, y) was counted (not for naive Bayes)."""
        return self.pair_offsets.shape[0] == self.n_attributes

    def xy(self, i: int) -> np.ndarray:
        """n(x_i, y) as a ``(|X_i|, C)`` view."""
        lo, hi = self.xy_offsets[i], self.xy_offsets[i + 1]
        return self.n_xy[lo:hi].reshape(int(self.cardinalities[i]), self.n_classes)

    def xxy(self, i: int, j: int) -> np.ndarray:
        """n(x_i, x_j, y) as a ``(|X_i|, |X_j|, C)`` view (``i != j``)."""
        if i == j:
            raise ParameterError(f"xxy needs two different attributes, got i = j = {i!r}")
        if not self.has_pairs:
            raise ParameterError("these counts have no pairs n(x_i, x_j, y): count them with pairs=True")
        if i > j:
            return self.xxy(j, i).transpose(1, 0, 2)
        ci, cj = int(self.cardinalities[i]), int(self.cardinalities[j])
        lo = self.pair_offsets[i, j]
        return self.n_xxy[lo : lo + ci * cj * self.n_classes].reshape(ci, cj, self.n_classes)

    def x_marginals(self) -> np.ndarray:
        """n(x_i) flat, indexed like ``n_xy`` without the class: ``[xy_offsets[i] // C + x]``."""
        return self.n_xy.reshape(-1, self.n_classes).sum(axis=1)


def row_blocks(n_rows: int, first: int = 0):
    """``(start, stop)`` of consecutive blocks of :data:`hdp_plugin.config.ROW_BLOCK` rows, from row
    ``first`` to ``n_rows``."""
    step = config.ROW_BLOCK
    for start in range(first, n_rows, step):
        cancel.check()  # a fit stops between blocks when cancelled (hdp_plugin.runtime.cancel)
        yield start, min(start + step, n_rows)


def pair_table_bytes(cardinalities: np.ndarray, n_classes: int) -> int:
    """Bytes of the n(x_i, x_j, y) table for these cardinalities (see the module docstring)."""
    card = np.asarray(cardinalities, dtype=np.float64)
    return int(4 * n_classes * (card.sum() ** 2 - (card**2).sum()))


def pairwise_bytes(cardinalities: np.ndarray, n_classes: int) -> int:
    """Bytes of everything pairwise that structure learning allocates: the n(x_i, x_j, y) table, the
    ``n x n`` pair offsets and CMI matrix (8 bytes a cell each), and the vectors of an entry per attribute
    beside them (MI, orders, a row of offsets: 512 bytes an attribute covers them). The pair offsets are
    laid out a row at a time, so that nothing else of ``n x n`` is allocated on the way: the peak memory
    that learning a TAN, kDB or SkDB adds is within this figure."""
    n = len(cardinalities)
    return pair_table_bytes(cardinalities, n_classes) + 16 * n * n + 512 * n


def needs_pairs(kind: str, k: int) -> bool:
    """Whether structure ``kind`` with ``k`` parents needs n(x_i, x_j, y) (naive Bayes and kDB-0 do not)."""
    return not (kind == "nb" or (kind == "kdb" and k == 0))


def _pair_limit(max_bytes: int | None) -> tuple[int, str]:
    """The most bytes of pairwise statistics, and the limit's name: ``max_bytes`` (default
    :data:`hdp_plugin.config.MAX_PAIR_BYTES`), or what the working memory in force leaves if less
    (:mod:`hdp_plugin.runtime.memory`)."""
    limit, name = (config.MAX_PAIR_BYTES, "max_bytes") if max_bytes is None else (max_bytes, "max_bytes")
    left = memory.available()
    if left is not None and left[0] < limit:
        return left
    return limit, name


class PairsTooLarge(TooLargeError):
    """Pairwise statistics refused before they are allocated (:func:`check_pairwise_bytes`)."""


def _too_many_pairs(n: int, need: int, limit: int, name: str, copies: int = 1) -> TooLargeError:
    each = f", {copies} at once" if copies > 1 else ""
    return PairsTooLarge(
        f"the pairwise counts of {n} attributes need {need / 1024**2:,.0f} MiB{each} (the limit, {name}, is "
        f"{limit / 1024**2:,.0f} MiB): use fewer attributes (or fewer values per attribute), or naive Bayes "
        f"(structure nb), which needs no pairs"
    )


def check_pairwise_bytes(cardinalities, n_classes: int, max_bytes: int | None = None, copies: int = 1) -> None:
    """:class:`~hdp_plugin.errors.TooLargeError` if ``copies`` sets of pairwise statistics (ESKDB members
    built at once) need more than ``max_bytes`` (default :data:`hdp_plugin.config.MAX_PAIR_BYTES`), or
    more than the working memory in force leaves (:mod:`hdp_plugin.runtime.memory`)."""
    limit, name = _pair_limit(max_bytes)
    need = pairwise_bytes(cardinalities, n_classes) * copies
    if need > limit:
        raise _too_many_pairs(len(cardinalities), need, limit, name, copies)


def _pair_offsets(card: np.ndarray, n_classes: int) -> tuple[np.ndarray, int]:
    """The ``n x n`` pair offsets (``-1`` on and below the diagonal) and the table's length: pairs
    ``(i, j)``, ``i < j``, laid out in row-major order, ``card[i] * card[j] * C`` cells each. A row at a
    time: no other ``n x n`` array is made."""
    n_attr = card.shape[0]
    pair_off = np.full((n_attr, n_attr), -1, dtype=np.int64)
    pos = 0
    for i in range(n_attr - 1):
        sizes = card[i + 1:].astype(np.int64) * (int(card[i]) * n_classes)
        row = pair_off[i, i + 1:]
        np.cumsum(sizes, out=row)
        row -= sizes
        row += pos
        pos += int(sizes.sum())
    return pair_off, pos


def validate_inputs(X, y, cardinalities, n_classes):
    """Check the array contract of structure learning and return normalised arrays.

    Returns ``(X, y, cardinalities, n_classes)`` with ``y`` as int32 and ``cardinalities`` as
    int64; ``X`` is returned as given (never copied). Codes themselves are checked by the
    counting pass.
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise ParameterError(f"n_classes must be an integer, got {n_classes!r}")
    n_classes = int(n_classes)
    if n_classes < 1:
        raise ParameterError(f"n_classes must be >= 1, got {n_classes!r}")
    if not isinstance(X, np.ndarray) or X.ndim != 2:
        raise ParameterError(f"X must be a 2-D array of integer codes, got {_describe(X)}")
    if X.dtype.kind not in "ui":
        raise ParameterError(f"X must hold integer codes, got dtype {X.dtype}")
    y_arr = np.asarray(y)
    if y_arr.ndim != 1 or y_arr.shape[0] != X.shape[0]:
        raise ParameterError(
            f"y must be a 1-D array with one class code per row of X ({X.shape[0]}), "
            f"got shape {y_arr.shape}"
        )
    if y_arr.dtype.kind not in "ui":
        raise ParameterError(f"y must hold integer class codes, got dtype {y_arr.dtype}")
    card = np.asarray(cardinalities)
    if card.ndim != 1 or card.shape[0] != X.shape[1]:
        raise ParameterError(
            f"cardinalities must have one entry per column of X ({X.shape[1]}), "
            f"got shape {card.shape}"
        )
    if card.size and (card.dtype.kind not in "ui" or card.min() < 1):
        raise ParameterError(f"cardinalities must be integers >= 1, got {card!r}")
    card = np.ascontiguousarray(card, dtype=np.int64)
    y_arr = np.ascontiguousarray(y_arr, dtype=np.int32)
    return X, y_arr, card, n_classes


def _describe(obj) -> str:
    if isinstance(obj, np.ndarray):
        return f"an array of shape {obj.shape}"
    return repr(type(obj).__name__)


def raise_for_status(status: int, bad: np.ndarray, row0: int, n_classes: int, card: np.ndarray):
    """Turn a counting kernel's status into a :class:`DataError` naming the bad cell."""
    if status == count_kernels.OK:
        return
    row = row0 + int(bad[0])
    if status == count_kernels.BAD_CLASS:
        raise DataError(f"y[{row}] = {int(bad[2])} is not a class code in 0..{n_classes - 1}")
    j = int(bad[1])
    raise DataError(
        f"X[{row}, {j}] = {int(bad[2])} is not a code of attribute {j} "
        f"(cardinalities[{j}] = {int(card[j])}, so codes are 0..{int(card[j]) - 1})"
    )


def count_statistics(
    X: np.ndarray,
    y: np.ndarray,
    cardinalities: np.ndarray,
    n_classes: int,
    *,
    max_bytes: int | None = None,
    pairs: bool = True,
    n_jobs: int = 1,
) -> CountStatistics:
    """Count n(y), n(x_i, y) and n(x_i, x_j, y) in one pass over the rows.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_attributes), unsigned integer codes
        Attribute codes; missing is one more code. Read block by block, never copied.
    y : ndarray of shape (n_rows,), integer
        Class codes ``0 .. n_classes - 1``.
    cardinalities : ndarray of shape (n_attributes,)
        Codes per attribute, the missing slot included.
    n_classes : int
        Number of classes C.
    max_bytes : int, optional
        Refuse (with :class:`~hdp_plugin.errors.TooLargeError`) pairwise statistics larger than this
        (:func:`pairwise_bytes`); default :data:`hdp_plugin.config.MAX_PAIR_BYTES` (4 GiB).
    pairs : bool, default True
        Count n(x_i, x_j, y); False counts n(y) and n(x_i, y) only (naive Bayes needs no more).
    n_jobs : int, default 1
        Threads: rows of more than one block are cut into that many parts, each counted on its own
        thread and added up (the same integers), if that many copies of the counts fit ``max_bytes``.

    Returns
    -------
    CountStatistics

    Raises
    ------
    ParameterError
        Arrays of the wrong shape or type.
    TooLargeError
        Pairwise statistics above ``max_bytes``.
    DataError
        A code outside its attribute's range or a class code outside ``0 .. n_classes - 1``.
    """
    X, y, card, n_classes = validate_inputs(X, y, cardinalities, n_classes)
    parts = row_parts(X.shape[0], config.ROW_BLOCK, n_jobs)
    if pairs and len(parts) > 1:
        try:
            check_pairwise_bytes(card, n_classes, max_bytes, copies=len(parts))
        except TooLargeError:
            parts = [(0, X.shape[0])]  # one copy of the counts (refused below if even that is too large)

    def count(lo, hi):
        acc = CountAccumulator(card, n_classes, max_bytes=max_bytes, pairs=pairs)
        for start, stop in row_blocks(hi, lo):
            acc.add(X[start:stop], y[start:stop], start)
        return acc

    counted = map_parts(count, parts)
    for other in counted[1:]:
        counted[0].merge(other)
    return counted[0].result()


class CountAccumulator:
    """:func:`count_statistics` block by block: :meth:`add` blocks of codes (from anywhere, in any
    order: the counts are integers), :meth:`merge` another accumulator's counts, :meth:`result`."""

    def __init__(self, cardinalities, n_classes: int, *, max_bytes: int | None = None, pairs: bool = True):
        card = np.ascontiguousarray(cardinalities, dtype=np.int64)
        n_attr = card.shape[0]
        # Step 1: lay out the flat tables (the pairs' only when wanted, and once known to fit)
        xy_off = np.zeros(n_attr + 1, dtype=np.int64)
        np.cumsum(card * n_classes, out=xy_off[1:])
        need = token = 0
        if pairs:  # within the limits, reserved in the working memory in force before anything is allocated
            check_pairwise_bytes(card, n_classes, max_bytes)
            need = pairwise_bytes(card, n_classes)
            token = memory.reserve(need)
            if token is None:
                limit, name = _pair_limit(max_bytes)
                raise _too_many_pairs(n_attr, need, limit, name)
        try:
            if pairs:
                pair_off, pos = _pair_offsets(card, int(n_classes))
            else:
                pair_off, pos = np.zeros((0, 0), dtype=np.int64), 0
            self.n_xxy = np.zeros(pos, dtype=np.int64)
        except BaseException:
            memory.release(token, need)
            raise
        memory.hold(token, need, self.n_xxy)  # given back when the table is let go
        self.pairs = bool(pairs)
        self.card, self.n_classes, self.xy_off, self.pair_off = card, int(n_classes), xy_off, pair_off
        self.n_rows = 0
        self.n_y = np.zeros(n_classes, dtype=np.int64)
        self.n_xy = np.zeros(int(xy_off[-1]), dtype=np.int64)
        self._bad = np.zeros(3, dtype=np.int64)

    def add(self, X: np.ndarray, y: np.ndarray, row0: int = 0) -> None:
        """Count one block of rows (``row0``: the block's first row, for error messages)."""
        y = np.ascontiguousarray(y, dtype=np.int32)
        if self.pairs:
            status = count_kernels.count_block(X, y, self.card, self.n_classes, self.xy_off, self.pair_off, self.n_y,
                                         self.n_xy, self.n_xxy, self._bad)
        else:
            status = count_kernels.count_block_marginals(X, y, self.card, self.n_classes, self.xy_off, self.n_y,
                                                   self.n_xy, self._bad)
        raise_for_status(status, self._bad, row0, self.n_classes, self.card)
        self.n_rows += int(X.shape[0])

    def merge(self, other: "CountAccumulator") -> "CountAccumulator":
        """Add another accumulator's counts (of the same layout) to these."""
        self.n_rows += other.n_rows
        self.n_y += other.n_y
        self.n_xy += other.n_xy
        self.n_xxy += other.n_xxy
        return self

    def result(self) -> CountStatistics:
        return CountStatistics(
            n_rows=int(self.n_rows),
            n_classes=self.n_classes,
            cardinalities=self.card,
            n_y=self.n_y,
            n_xy=self.n_xy,
            xy_offsets=self.xy_off,
            n_xxy=self.n_xxy,
            pair_offsets=self.pair_off,
        )


def mutual_information(stats: CountStatistics) -> np.ndarray:
    """MI(X_i; Y) in nats for every attribute, from raw frequencies.

    MI(X_i; Y) = sum over x, y of p(x, y) log[p(x, y) / (p(x) p(y))] with p the relative
    frequencies (docs/method.md section 2). Values are clamped at 0 (rounding can make an
    independent attribute's sum a hair negative), so ties at zero are exact.

    Parameters
    ----------
    stats : CountStatistics

    Returns
    -------
    ndarray of shape (n_attributes,)
    """
    return count_kernels.mutual_information_kernel(
        stats.n_y, stats.n_xy, stats.xy_offsets, stats.cardinalities, stats.n_classes, stats.n_rows
    )


def conditional_mutual_information(stats: CountStatistics) -> np.ndarray:
    """CMI(X_i; X_j | Y) in nats for every pair, from raw frequencies.

    CMI(X_i; X_j | Y) = sum over x_i, x_j, y of p(x_i, x_j, y)
    log[p(x_i, x_j, y) p(y) / (p(x_i, y) p(x_j, y))] (docs/method.md section 2). Each pair is
    computed once, so the matrix is exactly symmetric; the diagonal is 0 (an attribute is never
    its own parent) and values are clamped at 0.

    Parameters
    ----------
    stats : CountStatistics

    Returns
    -------
    ndarray of shape (n_attributes, n_attributes)
    """
    if not stats.has_pairs and stats.n_attributes > 1:
        raise ParameterError("CMI needs the pairs n(x_i, x_j, y): count them with pairs=True")
    return count_kernels.conditional_mutual_information_kernel(
        stats.n_y,
        stats.n_xy,
        stats.xy_offsets,
        stats.n_xxy,
        stats.pair_offsets,
        stats.cardinalities,
        stats.n_classes,
        stats.n_rows,
    )
