"""Where the rows of a fit are: the two backends of :func:`hdp_plugin.model.pipeline.fit_networks`.

A backend gives the pipeline what it reads of the data:

* ``sample``: the Dataset the cut points are learnt on; ``source``: its name in messages;
  ``n_classes``; ``least_cardinalities()``: the fewest codes each attribute can have (for a refusal
  before any work); ``members_at_once(n)``: the most of ``n`` members whose working memory is held
  together;
* ``run_members(step, n)``: ``step(rows, group)`` (steps 1 to 4 of the pipeline for the members
  ``group``, a list of indices, on the backend ``rows``) over all ``n`` members, the results in
  member order;
* ``map(fn, items)``: ``fn`` over ``items``, in order (on threads where that helps);
* ``part(attribute_sets)``: a group of members, each with its own attributes, whose ``count``,
  ``select`` and ``trees`` are steps 2 to 4 of the pipeline for the whole group.

:class:`MemoryRows` holds a Dataset: each member's codes are made for it and read directly; the
members run on ``n_jobs`` threads, each thread taking the next member and running its four steps on
its own (the kernels release the GIL, and no thread waits for another between steps), so at most
``n_jobs`` members' working memory is held at once (members that code the rows alike reuse the codes
and counts of the member before). :class:`SourceRows` reads a
:class:`~hdp_plugin.data.stream.BatchSource` on an engine (:class:`hdp_plugin.distributed.Engine`):
every step is one pass over the data for the whole group. Every result is integers (or exact
fixed-point sums), so the two give the same model.
"""

from __future__ import annotations

import copy
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..runtime import cancel
from ..runtime.threads import pool_map, resolved_threads
from ..data import Dataset
from ..errors import TooLargeError
from ..hdp.trees import build_trees
from ..preprocess import apply_cut_points
from ..structure.counts import count_statistics
from ..structure.selective import selective_kdb


def model_cardinalities(ds: Dataset) -> np.ndarray:
    """Codes per attribute as a model sees them: the labels, plus a slot for missing if the
    training data has any missing value of that attribute (at least 1)."""
    top = max((a.missing_code for a in ds.attributes), default=0)
    codes = np.array([a.missing_code for a in ds.attributes], np.promote_types(ds.X.dtype, np.min_scalar_type(top)))
    miss = np.zeros(len(codes), bool)
    for lo in range(0, ds.n_rows, 8192):  # every column at once, a block of rows at a time
        miss |= (ds.X[lo:lo + 8192] == codes).any(axis=0)
    cards = np.array([len(a.values) for a in ds.attributes], np.int64) + miss
    return np.maximum(cards, 1)


def _key(attributes) -> tuple:
    """Members whose attributes have the same cut points code the data alike."""
    return tuple(a.cut_points if a.numeric else None for a in attributes)


class MemoryRows:
    """The rows of a Dataset (class known on every row), the members of a group on ``n_jobs`` threads."""

    def __init__(self, ds: Dataset, n_jobs: int | None):
        self.ds = ds
        self.sample = ds
        self.source = ds.source
        self.n_classes = ds.n_classes
        self.threads = resolved_threads(n_jobs)
        # the last member's codes and counts, for the next member with the same cut points (nominal
        # data, where members differ by their orders only, or deterministic discretisations)
        self._last_coded = (None, None)
        self._last_counted = (None, None)
        self._lock = threading.Lock()

    def least_cardinalities(self) -> np.ndarray:
        return model_cardinalities(self.ds)

    def members_at_once(self, n: int) -> int:
        return max(1, min(self.threads, n))

    def run_members(self, step, n: int) -> list:
        """Each member on its own, on the threads: every thread's member runs inline on a serial view."""
        serial = self
        if self.threads > 1 and n > 1:
            serial = copy.copy(self)
            serial.threads = 1
        return [r for part in self.map(lambda e: step(serial, [e]), list(range(n))) for r in part]

    def coded(self, attributes) -> Dataset:
        """The rows coded with ``attributes``' cut points (the previous member's, if they are the same)."""
        key = _key(attributes)
        with self._lock:
            last_key, last = self._last_coded
        if last is not None and last_key == key:
            return last
        coded = apply_cut_points(self.ds, attributes)
        with self._lock:
            self._last_coded = (key, coded)
        return coded

    def counted(self, attributes, cards, pairs: bool, count):
        """``count()``, the counts of the rows coded with ``attributes``, or the previous member's if it
        coded them alike (the same numbers: counts are integers). The previous member's are let go
        before counting anew, so no more copies are alive than members in flight."""
        key = (_key(attributes), tuple(int(c) for c in cards), bool(pairs))
        with self._lock:
            last_key, last = self._last_counted
            if last is not None and last_key == key:
                return last
            self._last_counted = (None, None)
        stats = count()
        with self._lock:
            self._last_counted = (key, stats)
        return stats

    def map(self, fn, items: list) -> list:
        if self.threads > 1 and len(items) > 1:
            with ThreadPoolExecutor(max_workers=min(self.threads, len(items))) as pool:
                return pool_map(pool, fn, items)
        return [fn(x) for x in items]

    def part(self, attribute_sets: list) -> "_MemoryPart":
        return _MemoryPart(self, attribute_sets)


class _MemoryPart:
    def __init__(self, rows: MemoryRows, attribute_sets: list):
        self.rows, self.attribute_sets = rows, attribute_sets
        self.coded = rows.map(rows.coded, attribute_sets)
        # a step of one member uses the threads itself; several members take them one each
        self.inner_threads = rows.threads if len(attribute_sets) == 1 else 1

    def _each(self, fn, members) -> list:
        def one(i):
            cancel.check()  # between members (and inside each, between blocks of rows)
            return fn(i)
        return self.rows.map(one, list(members))

    def cardinalities(self) -> list[np.ndarray]:
        return [model_cardinalities(c) for c in self.coded]

    def count(self, cards, pairs: bool) -> list:
        C = self.rows.n_classes

        def one(i):
            return self.rows.counted(self.attribute_sets[i], cards[i], pairs,
                                     lambda: count_statistics(self.coded[i].X, self.coded[i].y, cards[i], C, pairs=pairs,
                                                              n_jobs=self.inner_threads))
        return self._each(one, range(len(self.coded)))

    def select(self, members, stats, k: int, m: float, orders, max_cells: int) -> list:
        """SkDB's selection of the members ``members`` (indices in the group) on their counts and orders,
        each within ``max_cells`` table cells."""
        jobs = dict(zip(members, zip(stats, orders)))
        return self._each(lambda i: selective_kdb(self.coded[i].X, self.coded[i].y, jobs[i][0], k, m=m,
                                                  order=jobs[i][1], max_cells=max_cells), members)

    def trees(self, structures, cards, max_cells: int) -> list:
        """Every member's context trees, or the TooLargeError that refused them."""
        C = self.rows.n_classes

        def one(i):
            s, c = structures[i], self.coded[i]
            try:
                return build_trees(c.X, c.y, cards[i], C, s.parents, s.kept, max_cells=max_cells,
                                   n_jobs=self.inner_threads)
            except TooLargeError as exc:
                return exc
        return self._each(one, range(len(self.coded)))


class SourceRows:
    """The rows of a batch source read by an engine's passes, after the schema pass (``schema``);
    each pass's seconds are added to ``passes``."""

    def __init__(self, source, schema, engine, n_jobs: int | None, passes: dict):
        self.data, self.schema, self.engine, self.n_jobs, self.passes = source, schema, engine, n_jobs, passes
        self.sample = schema.sample
        self.source = source.source
        self.class_attribute = schema.class_attribute
        self.n_classes = len(schema.class_attribute.values)

    def cardinalities(self, attributes) -> np.ndarray:
        """Codes per attribute as the model sees them (as :func:`model_cardinalities` of the whole data: a
        missing slot where any row with a known class misses the value)."""
        return np.maximum(np.array([len(a.values) for a in attributes], np.int64) + self.schema.has_missing, 1)

    def least_cardinalities(self) -> np.ndarray:
        return self.cardinalities(self.schema.attributes)

    def members_at_once(self, n: int) -> int:
        return max(1, n)

    def run_members(self, step, n: int) -> list:
        """Every member in one group: each pass reads the data once for all of them (the engine takes the
        selection's passes in groups of its own, hdp_plugin.distributed.local.SHARED_PASS_MEMBERS)."""
        return step(self, list(range(n)))

    def map(self, fn, items: list) -> list:
        return [fn(x) for x in items]

    def part(self, attribute_sets: list) -> "_SourcePart":
        return _SourcePart(self, attribute_sets)

    def timed(self, name: str, fn, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.passes[name] = self.passes.get(name, 0.0) + time.perf_counter() - t0


class _SourcePart:
    def __init__(self, rows: SourceRows, attribute_sets: list):
        self.rows, self.attribute_sets = rows, attribute_sets

    def cardinalities(self) -> list[np.ndarray]:
        return [self.rows.cardinalities(a) for a in self.attribute_sets]

    def count(self, cards, pairs: bool) -> list:
        r = self.rows
        return r.timed("count", r.engine.count_members, r.data, self.attribute_sets, r.class_attribute, cards,
                       r.n_classes, pairs=pairs)

    def select(self, members, stats, k: int, m: float, orders, max_cells: int) -> list:
        r = self.rows
        return r.timed("tries_and_loo", r.engine.select_members, r.data, [self.attribute_sets[i] for i in members],
                       r.class_attribute, stats, k, m, orders, n_jobs=r.n_jobs, max_cells=max_cells)

    def trees(self, structures, cards, max_cells: int) -> list:
        r = self.rows
        t0 = time.perf_counter()
        specs = [[(c, list(s.parents[c])) for c in s.kept] for s in structures]
        cells = r.engine.cells_members(r.data, self.attribute_sets, r.class_attribute, specs, cards, r.n_classes)
        out = []
        for s, card, cl in zip(structures, cards, cells):
            try:
                out.append(build_trees(None, None, card, r.n_classes, s.parents, s.kept, leaf_cells=cl,
                                       max_cells=max_cells))
            except TooLargeError as exc:
                out.append(exc)
        r.passes["trees"] = r.passes.get("trees", 0.0) + time.perf_counter() - t0
        return out
