"""The local engine: the passes of a streamed fit in this process, one batch after another.

:class:`LocalEngine` is the default :class:`~hdp_plugin.distributed.Engine`. Its passes are plain
functions over a :class:`~hdp_plugin.data.stream.BatchSource` that the Dask engine maps over
partitions too: each returns partial results (accumulators) that merge exactly, so a pass over
all the rows here equals the merge of the passes over any split of them. An ESKDB's members share
every pass (:func:`member_batches` decodes a batch once and codes it as each member codes it).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..data.stream import BatchSource, scan_schema
from ..runtime.threads import pool_map
from ..hdp.trees import LeafCellCounter
from ..structure.counts import CountAccumulator
from ..structure.selective import LooAccumulator, TrieAccumulator


class LocalEngine:
    """The passes in this process, one batch after another (the default engine)."""

    name = "local"

    def scan(self, source: BatchSource, categorical=None):
        return scan_schema(source, categorical=categorical)

    def sample(self, trees, **kwargs):
        from ..hdp.sampler import sample

        return sample(trees, **kwargs)

    # -- ensembles: one pass for all members -----------------------------------------------------
    def count_members(self, source, attribute_sets, class_attribute, cards, n_classes, pairs=True):
        """Every member's counts on its own attributes, in one pass over ``source``."""
        return count_members(source, attribute_sets, class_attribute, cards, n_classes, pairs=pairs).result()

    def select_members(self, source, attribute_sets, class_attribute, stats, k, m, orders, n_jobs=None,
                       max_cells=None):
        """Every member's SkDB selection on its own order, the tries and leave-one-out passes shared (each
        within ``max_cells`` table cells, if given)."""
        return select_members(source, attribute_sets, class_attribute, stats, k, m, orders, n_jobs, max_cells)

    def cells_members(self, source, attribute_sets, class_attribute, trees, cards, n_classes):
        """Every member's leaf cells of its own trees, in one pass over ``source``."""
        return cells_members(source, attribute_sets, class_attribute, trees, cards, n_classes).result()


# -- the members' passes ----------------------------------------------------------------------------
def member_batches(source: BatchSource, attribute_sets, class_attribute, wanted=None):
    """Every batch of ``source`` (rows with a known class) decoded once and coded as each member in
    ``wanted`` (default all) codes it: yields one list of ``(X, y)`` per batch, in ``wanted`` order.
    Members whose attributes are equal (no numeric attribute, or a deterministic discretisation) share
    one code matrix."""
    from ..data.arrow import table_columns
    from ..data.conform import conform_columns
    from ..preprocess import apply_cut_points

    wanted = list(range(len(attribute_sets))) if wanted is None else list(wanted)
    keys = [tuple(a.cut_points if a.numeric else None for a in attribute_sets[e]) for e in wanted]
    for t in source.batches():
        ds = conform_columns(table_columns(t, source.source), attribute_sets[0], class_attribute,
                             source=source.source)
        keep = ds.y >= 0
        if not keep.all():
            ds = ds.take(keep)
        if not ds.n_rows:
            continue
        coded = {}
        out = []
        for e, key in zip(wanted, keys):
            if key not in coded:
                coded[key] = apply_cut_points(ds, attribute_sets[e]).X
            out.append((coded[key], ds.y))
        yield out


class MemberPartials:
    """One partial result per member (accumulators of part of the rows); :meth:`merge` adds another
    part's, member by member (so an engine's tree reduce merges them as it merges one)."""

    def __init__(self, parts: list):
        self.parts = parts

    def merge(self, other: "MemberPartials") -> "MemberPartials":
        for a, b in zip(self.parts, other.parts):
            a.merge(b)
        return self

    def result(self) -> list:
        return [p.result() for p in self.parts]


def count_members(source, attribute_sets, class_attribute, cards, n_classes, row0: int = 0,
                  pairs: bool = True) -> MemberPartials:
    """Every member's CountAccumulator over ``source`` (whose first row is global row ``row0``; without
    the pairwise counts unless ``pairs``)."""
    accs = [CountAccumulator(c, n_classes, pairs=pairs) for c in cards]
    row = row0
    for coded in member_batches(source, attribute_sets, class_attribute):
        for acc, (X, y) in zip(accs, coded):
            acc.add(X, y, row)
        row += coded[0][0].shape[0]
    return MemberPartials(accs)


def members_pass(source, attribute_sets, class_attribute, accs: list, wanted=None, workers: int = 1) -> MemberPartials:
    """One pass over ``source`` adding every batch, coded as member ``e`` codes it, to ``accs[e]``
    (anything with ``add(X, y)``), for the members in ``wanted`` (default all). With ``workers > 1``
    the members add a batch on that many threads (the kernels release the GIL); each member still
    adds its batches in row order, so the result does not depend on it."""
    wanted = list(range(len(accs))) if wanted is None else list(wanted)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hdp-members") \
        if workers > 1 and len(wanted) > 1 else None
    try:
        for coded in member_batches(source, attribute_sets, class_attribute, wanted):
            if pool is None:
                for e, (X, y) in zip(wanted, coded):
                    accs[e].add(X, y)
            else:  # waits for every member and re-raises the first error
                pool_map(pool, lambda item: accs[item[0]].add(*item[1]), zip(wanted, coded))
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return MemberPartials(accs)


def cells_members(source, attribute_sets, class_attribute, trees, cards, n_classes) -> MemberPartials:
    """Every member's LeafCellCounter of its trees (``trees[e]``: ``(attribute, parents)`` pairs) over
    ``source``; members without a tree are not coded."""
    counters = [LeafCellCounter(t, c, n_classes) for t, c in zip(trees, cards)]
    return members_pass(source, attribute_sets, class_attribute, counters, [e for e, t in enumerate(trees) if t])


def tries_members(source, attribute_sets, class_attribute, cards, n_classes, parents, workers: int = 1) -> MemberPartials:
    """Every member's context tries (:class:`~hdp_plugin.structure.selective.TrieAccumulator` of its
    kDB-K ``parents[e]``) over ``source``, in one pass."""
    accs = [TrieAccumulator(c, n_classes, p) for c, p in zip(cards, parents)]
    return members_pass(source, attribute_sets, class_attribute, accs, workers=workers)


def loo_members(source, attribute_sets, class_attribute, tries, cards, n_classes, n_y, n_rows, orders, max_k,
                m, workers: int = 1) -> MemberPartials:
    """Every member's leave-one-out sums (:class:`~hdp_plugin.structure.selective.LooSums`) of the rows
    of ``source`` against its tries ``tries[e]`` of all the rows, in one pass."""
    accs = [LooAccumulator(t, c, n_classes, n_y, n_rows, o, max_k, m) for t, c, o in zip(tries, cards, orders)]
    members_pass(source, attribute_sets, class_attribute, accs, workers=workers)
    return MemberPartials([a.sums for a in accs])


#: most members whose tries and leave-one-out sums are computed together (their tries in memory at
#: once); more members take more passes, in groups of this size
SHARED_PASS_MEMBERS = 64


class _LocalMemberPasses:
    """The members' tries and leave-one-out passes in this process (the ``passes`` of
    :func:`~hdp_plugin.structure.selective.selective_kdbs`): one read of ``source`` each for all
    members, the members adding every batch on ``workers`` threads."""

    def __init__(self, source, attribute_sets, class_attribute, workers: int):
        self.source, self.attribute_sets, self.class_attribute = source, attribute_sets, class_attribute
        self.workers = workers

    def tries(self, stats, parents):
        return tries_members(self.source, self.attribute_sets, self.class_attribute, [s.cardinalities for s in stats],
                             stats[0].n_classes, parents, workers=self.workers).result()

    def loo(self, stats, tries, orders, max_k, m):
        s0 = stats[0]  # every member counts the same rows: the same class counts
        return loo_members(self.source, self.attribute_sets, self.class_attribute, tries,
                           [s.cardinalities for s in stats], s0.n_classes, s0.n_y, s0.n_rows, orders, max_k, m,
                           workers=self.workers).parts


def select_in_groups(attribute_sets, stats, k, m, orders, make_passes, max_cells=None) -> list:
    """Every member's SkDB selection (:func:`~hdp_plugin.structure.selective.selective_kdbs` on its
    counts ``stats[e]`` and order ``orders[e]``), ``SHARED_PASS_MEMBERS`` members at a time, each group's
    two passes from ``make_passes(group)`` (a slice of the members)."""
    from ..structure.selective import selective_kdbs

    out = []
    for lo in range(0, len(attribute_sets), SHARED_PASS_MEMBERS):
        g = slice(lo, lo + SHARED_PASS_MEMBERS)
        out += selective_kdbs(stats[g], k, m=m, orders=orders[g], passes=make_passes(g), max_cells=max_cells)
    return out


def select_members(source, attribute_sets, class_attribute, stats, k, m, orders, n_jobs=None,
                   max_cells=None) -> list:
    """SkDB's selection of every member with the tries and leave-one-out passes shared: each reads
    ``source`` once for all members of a group, the members adding a batch on ``n_jobs`` threads.
    The sums are exact, so each member's selection is the in-memory one bit for bit."""
    from ..runtime.threads import resolved_threads as _threads

    workers = _threads(n_jobs)
    return select_in_groups(attribute_sets, stats, k, m, orders,
                            lambda g: _LocalMemberPasses(source, attribute_sets[g], class_attribute, workers),
                            max_cells)
