"""Context trees as flat arrays (docs/method.md section 3).

One tree per kept attribute ``X_c``. Depth 0 is the root (no condition), depth 1 branches on the
class, depth ``j + 1`` on the ``j``-th attribute parent in branching order. Only contexts that at
least one training row reaches exist. Every node holds one cell per value of ``X_c``.

All trees of a model live in one set of arrays, nodes of a tree contiguous and in breadth-first
order (so reverse order is a bottom-up sweep):

``tree_node_start[t] .. tree_node_start[t+1]``
    the nodes of tree ``t``; node ``tree_node_start[t]`` is its root.
``node_parent``, ``node_depth``, ``node_branch``
    global parent index (-1 at a root), depth, and the value of the branching variable that leads
    from the parent to the node (-1 at a root).
``node_cell_start[i] .. node_cell_start[i] + tree_card[tree]``
    the node's cells; ``leaf_counts`` holds the data counts of leaf cells and 0 elsewhere.
``child_start``, ``child_table``
    for prediction: the child of internal node ``i`` reached with branching value ``v`` is
    ``child_table[child_start[i] + v]`` (-1 when that context was never seen); leaves have
    ``child_start == -1``.
``tree_var_start[t] .. tree_var_start[t+1]``
    the branching variables of tree ``t`` by depth (depth 1 first): ``-1`` for the class, else the
    attribute index, in ``branch_vars``.

The trees are built by one pass over the data as a reduction over row blocks: each block yields
sorted unique (context, value) keys with counts, and blocks merge by key. The same merge works for
blocks read from disk or counted elsewhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from .. import config
from ..runtime.threads import map_parts, row_parts
from ..config import ROW_BLOCK
from ..errors import DataError, TooLargeError

_KEY_LIMIT = np.iinfo(np.int64).max


@dataclass(frozen=True)
class TreeNodes:
    """One context tree before layout: its attribute and cardinality, its branching variables
    (``-1`` the class, then the attribute parents) and, per node in depth order, its parent (index
    within the tree, -1 at the root), depth and branch value; ``counts`` holds every cell's data
    count (only leaf cells are kept)."""

    attr: int
    card: int
    branching: list
    parent: np.ndarray
    depth: np.ndarray
    branch: np.ndarray
    counts: np.ndarray


@dataclass
class ContextTrees:
    """All context trees of one model, as flat arrays (see the module docstring)."""

    attrs: np.ndarray  # (n_trees,) attribute index of each tree
    tree_card: np.ndarray  # (n_trees,) number of values of the tree's attribute
    tree_node_start: np.ndarray  # (n_trees + 1,)
    tree_var_start: np.ndarray  # (n_trees + 1,)
    branch_vars: np.ndarray  # (sum of depths,) -1 = class
    node_parent: np.ndarray
    node_depth: np.ndarray
    node_branch: np.ndarray
    node_cell_start: np.ndarray  # (n_nodes + 1,)
    node_tree: np.ndarray
    is_leaf: np.ndarray
    child_start: np.ndarray
    child_table: np.ndarray
    #: (n_cells,) int64; empty in trees made for the HDP sampler alone (``concatenate_trees(...,
    #: counts=False)``), whose counts travel as its cells (:class:`~hdp_plugin.hdp.sampler.SamplerCells`)
    leaf_counts: np.ndarray
    n_classes: int
    cardinalities: np.ndarray  # (n_attributes,) of the model

    @property
    def n_trees(self) -> int:
        return int(self.attrs.shape[0])

    @property
    def n_nodes(self) -> int:
        return int(self.node_parent.shape[0])

    @property
    def n_cells(self) -> int:
        return int(self.node_cell_start[-1])

    @classmethod
    def from_nodes(cls, trees: list["TreeNodes"], n_classes: int, cardinalities) -> "ContextTrees":
        """All trees' flat arrays from each tree's nodes (parents local to the tree, nodes sorted by
        depth): global node, cell and child indices, leaves and child tables (level by level, every
        node above the leaves with one slot per value of the variable it branches on).

        The model-file reader lays trees out with it, in NumPy (reading a model
        file never imports numba); :func:`build_trees` lays a fit's trees out with one kernel call
        (:func:`~hdp_plugin.hdp.tree_kernels.lay_out_trees`), tested to give the same arrays. Raises
        ValueError if two nodes of a tree share a context.
        """
        cardinalities = np.asarray(cardinalities, dtype=np.int64)
        node_start, var_start, bvars, child_tables, child_starts = [0], [0], [], [], []
        child_off = 0
        for tr in trees:
            n_nodes, off = tr.parent.shape[0], node_start[-1]
            radix = np.asarray([int(n_classes)] + [int(cardinalities[v]) for v in tr.branching[1:]], np.int64)
            cstart, tab = _child_table(tr, radix, off, child_off)
            child_off += tab.size
            child_tables.append(tab)
            child_starts.append(cstart)
            bvars.extend(tr.branching)
            var_start.append(len(bvars))
            node_start.append(off + n_nodes)

        def cat(parts, dtype):
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0), dtype=dtype)

        node_start_a = np.asarray(node_start, np.int64)
        tree_card = np.asarray([tr.card for tr in trees], np.int64)
        card_per_node = np.repeat(tree_card, np.diff(node_start_a))
        return cls(
            attrs=np.asarray([tr.attr for tr in trees], np.int64),
            tree_card=tree_card,
            tree_node_start=node_start_a,
            tree_var_start=np.asarray(var_start, np.int64),
            branch_vars=np.asarray(bvars, np.int64),
            node_parent=cat([np.where(tr.parent >= 0, tr.parent + o, -1) for tr, o in zip(trees, node_start)],
                            np.int64),
            node_depth=cat([tr.depth for tr in trees], np.int64),
            node_branch=cat([tr.branch for tr in trees], np.int64),
            node_cell_start=np.concatenate(([0], np.cumsum(card_per_node))).astype(np.int64),
            node_tree=np.repeat(np.arange(len(trees), dtype=np.int64), np.diff(node_start_a)),
            is_leaf=cat([tr.depth == len(tr.branching) for tr in trees], np.bool_),
            child_start=cat(child_starts, np.int64),
            child_table=cat(child_tables, np.int64),
            leaf_counts=cat([np.where(np.repeat(tr.depth == len(tr.branching), tr.card), tr.counts, 0)
                             for tr in trees], np.int64),
            n_classes=int(n_classes),
            cardinalities=cardinalities,
        )

    def raw_counts(self, compiled: bool = False) -> np.ndarray:
        """Data counts at every cell: leaves as counted, internal nodes as the sum of their children
        (``compiled``: by a numba kernel, for a fit; else level by level with NumPy, the same counts)."""
        if compiled:
            from .tree_kernels import add_children_counts

            n = np.array(self.leaf_counts, dtype=np.int64)  # a copy
            add_children_counts(n, np.ascontiguousarray(self.node_parent, np.int64),
                                np.ascontiguousarray(self.node_tree, np.int64),
                                np.ascontiguousarray(self.tree_card, np.int64),
                                np.ascontiguousarray(self.node_cell_start, np.int64))
            return n
        n = self.leaf_counts.copy()
        for t in range(self.n_trees):
            card = int(self.tree_card[t])
            lo, hi = int(self.tree_node_start[t]), int(self.tree_node_start[t + 1])
            for depth in range(int(self.node_depth[lo:hi].max()), 0, -1):
                nodes = lo + np.nonzero(self.node_depth[lo:hi] == depth)[0]
                src = self.node_cell_start[nodes][:, None] + np.arange(card)
                dst = self.node_cell_start[self.node_parent[nodes]][:, None] + np.arange(card)
                np.add.at(n, dst.ravel(), n[src.ravel()])
        return n



def _child_table(tr: TreeNodes, radix: np.ndarray, off: int, child_off: int) -> tuple[np.ndarray, np.ndarray]:
    """One tree's child table with NumPy (:meth:`ContextTrees.from_nodes`): ``(child_start, table)``."""
    cstart = np.full(tr.parent.shape[0], -1, np.int64)
    level = np.searchsorted(tr.depth, np.arange(len(tr.branching) + 2))
    tables = []
    for d in range(1, len(tr.branching) + 1):
        plo, phi = int(level[d - 1]), int(level[d])
        kids = np.arange(int(level[d]), int(level[d + 1]))
        slot = (tr.parent[kids] - plo) * radix[d - 1] + tr.branch[kids]
        if np.unique(slot).size != slot.size:
            raise ValueError(f"two nodes of the tree of attribute {tr.attr} share a context")
        tab = np.full((phi - plo) * radix[d - 1], -1, np.int64)
        tab[slot] = kids + off
        cstart[plo:phi] = child_off + np.arange(phi - plo) * radix[d - 1]
        child_off += tab.size
        tables.append(tab)
    return cstart, (np.concatenate(tables) if tables else np.zeros(0, np.int64))


def _radices(card_vars: list[int]) -> None:
    prod = 1
    for r in card_vars:
        prod *= max(int(r), 1)
        if prod > _KEY_LIMIT:
            raise DataError(
                "a context tree has too many possible contexts to index with 64-bit keys; "
                "use a smaller k or fewer attribute values"
            )


def _merge(keys_list, counts_list):
    keys = np.concatenate(keys_list)
    counts = np.concatenate(counts_list)
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    if keys.size == 0:
        return keys, counts
    starts = np.concatenate(([0], np.nonzero(np.diff(keys))[0] + 1))
    return keys[starts], np.add.reduceat(counts, starts)


def count_leaf_cells(X, y, trees, cardinalities, n_classes, block=ROW_BLOCK, n_jobs=1):
    """Sorted unique leaf (context, value) keys of every tree and their counts, in one pass.

    ``trees`` is a list of ``(c, parents)``. The key of a row in the tree of ``X_c`` is the
    mixed-radix number ``(((y * r1 + x_p1) * r2 + x_p2) ...) * r_c + x_c``. The rows are read once,
    block by block; each block yields per-tree partial counts that are merged by key at the end
    (the merge is associative, so blocks may come from anywhere: with ``n_jobs`` > 1, contiguous
    parts of the blocks are counted on that many threads).

    Returns
    -------
    list of (keys, counts) pairs of int64 arrays, one per tree.
    """

    def count(first, last):
        counter = LeafCellCounter(trees, cardinalities, n_classes)
        for lo in range(first, last, block):
            counter.add(X[lo : min(lo + block, last)], y[lo : min(lo + block, last)])
        return counter

    counters = map_parts(count, row_parts(X.shape[0], block, n_jobs))
    for other in counters[1:]:
        counters[0].merge(other)
    return counters[0].result()


class LeafCellCounter:
    """:func:`count_leaf_cells` block by block, for rows streamed from disk or counted elsewhere.

    :meth:`add` counts a block; partial (keys, counts) are merged whenever they hold more than
    ``merge_above`` entries, so memory stays bounded by the trees' distinct cells, not the rows;
    :meth:`merge` adds another counter's cells; :meth:`result` is what :func:`count_leaf_cells` returns.
    The result does not depend on how the rows are cut into blocks (counts are integers, keys sorted).
    """

    def __init__(self, trees, cardinalities, n_classes, *, merge_above: int = 1 << 22):
        self.trees = [(int(c), [int(p) for p in ps]) for c, ps in trees]
        self.specs = [(c, np.asarray(ps, np.int64)) for c, ps in self.trees]
        self.card = np.ascontiguousarray(cardinalities, dtype=np.int64)
        self.n_classes = int(n_classes)
        for c, parents in self.trees:
            _radices([self.n_classes] + [int(self.card[p]) for p in parents] + [int(self.card[c])])
        self.partial = [([], []) for _ in self.trees]
        self.pending = 0
        self.merge_above = merge_above

    def add(self, X, y) -> None:
        from .tree_kernels import block_leaf_cells

        for (c, parents), (keys_list, counts_list) in zip(self.specs, self.partial):
            u, cnt = block_leaf_cells(X, y, c, parents, self.card, int(self.card[c]))
            keys_list.append(u)
            counts_list.append(cnt)
            self.pending += u.size
        if self.pending > self.merge_above:
            self._compact()

    def _compact(self) -> None:
        self.pending = 0
        for t, (k, n) in enumerate(self.partial):
            if len(k) > 1:
                mk, mn = _merge(k, n)
                self.partial[t] = ([mk], [mn])
            self.pending += sum(a.size for a in self.partial[t][0])

    def merge(self, other: "LeafCellCounter") -> "LeafCellCounter":
        for (k, n), (ok, on) in zip(self.partial, other.partial):
            k.extend(ok)
            n.extend(on)
        self.pending += other.pending
        self._compact()
        return self

    def result(self) -> list:
        empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        return [_merge(k, n) if k else empty for k, n in self.partial]


#: bytes one table cell takes at the peak of a fit (the trees, the sampler's counts, probabilities and
#: running sums, the tables, and the columns of the model file being written)
FIT_BYTES_PER_CELL = 160
#: the most bytes one table cell takes in a model file: a stored cell's value and log-probability (10), and
#: its node's fields (16) shared by at least two values
FILE_BYTES_PER_CELL = 18


def model_size_error(cells: int, n_trees: int, depth: int, widest: int, limit: int) -> TooLargeError:
    """The refusal of a model with more than ``limit`` cells: how big it would be and what to lower."""
    def gib(n):
        return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"

    return TooLargeError(
        f"the model would have {cells:,} table cells in {n_trees} context trees (about {gib(cells * FIT_BYTES_PER_CELL)} "
        f"of memory to fit and a {gib(cells * FILE_BYTES_PER_CELL)} model file), more than the limit of {limit:,} "
        f"(hdp_plugin.config.MAX_MODEL_CELLS); lower k (the trees branch on the class and up to {depth - 1} "
        f"attribute parent(s)), use fewer attributes ({n_trees} get a tree), or fewer values per attribute "
        f"(the widest has {widest}; coarser discretization helps numeric ones)")


def build_trees(X, y, cardinalities, n_classes, parents, kept, block=ROW_BLOCK, *,
                max_cells: int | None = None, leaf_cells=None, n_jobs: int = 1) -> ContextTrees:
    """Build the context trees of the kept attributes.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_attributes), unsigned integer codes
    y : ndarray of shape (n_rows,), class codes in ``0 .. n_classes - 1``
    cardinalities : ndarray of shape (n_attributes,)
        Number of codes of each attribute as the model sees it; every code in ``X`` is below it.
    n_classes : int
    parents : sequence of sequence of int
        Attribute parents of every attribute, in branching order.
    kept : sequence of int
        The attributes that get a tree, in tree order.

    max_cells : int, optional
        Most table cells allowed (``config.MAX_MODEL_CELLS`` by default): counted exactly, from the
        distinct contexts of the data, before any tree is laid out.
    leaf_cells : list, optional
        The leaf cells already counted (:meth:`LeafCellCounter.result` over streamed rows, in
        ``kept`` order); then ``X`` and ``y`` are not read (pass None).
    n_jobs : int, default 1
        Threads for the pass over more than one block of rows (:func:`count_leaf_cells`).

    Returns
    -------
    ContextTrees

    Raises
    ------
    TooLargeError
        When the trees would have more than ``max_cells`` cells; the message says how big the
        model would be and what to lower.
    """
    cardinalities = np.asarray(cardinalities, dtype=np.int64)
    limit = config.MAX_MODEL_CELLS if max_cells is None else max_cells
    kept = list(kept)
    specs = [(c, list(parents[c])) for c in kept]
    if leaf_cells is None:
        keys, counts, key_start = _leaf_cells_flat(X, y, specs, cardinalities, n_classes, block, n_jobs)
    else:
        keys, counts, key_start = _flat_cells(leaf_cells)
    from .tree_kernels import lay_out_trees

    # every tree's levels (the leaf contexts, then by dropping the last branching variable), the size
    # check before anything is laid out, then every tree's nodes, child table and cells: one kernel call
    card_c = np.asarray([cardinalities[c] for c in kept], np.int64)
    radix = np.asarray([v for c, ps in specs for v in [int(n_classes)] + [int(cardinalities[p]) for p in ps]],
                       np.int64)
    radix_start = np.concatenate(([0], np.cumsum([1 + len(ps) for _, ps in specs], dtype=np.int64)))
    total, node_start, parent, depth, branch, child_start, child_table, leaf_counts = lay_out_trees(
        keys, counts, np.asarray(key_start, np.int64), card_c, radix, radix_start, int(limit))
    if total > limit:
        raise model_size_error(int(total), len(kept), 1 + max([len(ps) for _, ps in specs], default=0),
                               int(max(card_c, default=0)), limit)
    if (child_start == -2).any():  # cannot happen for trees counted from data: a defect, not bad input
        raise ValueError("two nodes of a context tree share a context, or a node's parent, depth or branch "
                         "value is out of place")
    n_per_tree = np.diff(node_start)
    card_per_node = np.repeat(card_c, n_per_tree)
    n_levels = np.diff(radix_start)
    return ContextTrees(
        attrs=np.asarray(kept, np.int64),
        tree_card=card_c,
        tree_node_start=node_start,
        tree_var_start=radix_start,
        branch_vars=np.asarray([v for _, ps in specs for v in [-1] + [int(p) for p in ps]], np.int64),
        node_parent=parent,
        node_depth=depth,
        node_branch=branch,
        node_cell_start=np.concatenate(([0], np.cumsum(card_per_node))).astype(np.int64),
        node_tree=np.repeat(np.arange(len(kept), dtype=np.int64), n_per_tree),
        is_leaf=depth == np.repeat(n_levels, n_per_tree),
        child_start=child_start,
        child_table=child_table,
        leaf_counts=leaf_counts,
        n_classes=int(n_classes),
        cardinalities=cardinalities,
    )


def _leaf_cells_flat(X, y, specs, cardinalities, n_classes, block, n_jobs=1):
    """:func:`count_leaf_cells` as flat arrays ``(keys, counts, key_start)``: tree ``t``'s cells are
    ``key_start[t]:key_start[t + 1]`` (one kernel call for all the trees when the rows fit in one block)."""
    for c, ps in specs:
        _radices([n_classes] + [int(cardinalities[p]) for p in ps] + [int(cardinalities[c])])
    if X.shape[0] > block:
        return _flat_cells(count_leaf_cells(X, y, specs, cardinalities, n_classes, block, n_jobs))
    from .tree_kernels import block_leaf_cells_all

    attrs = np.asarray([c for c, _ in specs], np.int64)
    flat = np.asarray([p for _, ps in specs for p in ps], np.int64)
    pstart = np.concatenate(([0], np.cumsum([len(ps) for _, ps in specs], dtype=np.int64)))
    return block_leaf_cells_all(X, y, attrs, flat, pstart, np.ascontiguousarray(cardinalities, np.int64))


def _flat_cells(cells: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-tree ``(keys, counts)`` pairs (:func:`count_leaf_cells`) as ``(keys, counts, key_start)``."""
    keys = np.concatenate([k for k, _ in cells]) if cells else np.zeros(0)
    counts = np.concatenate([n for _, n in cells]) if cells else np.zeros(0)
    key_start = np.concatenate(([0], np.cumsum([k.shape[0] for k, _ in cells], dtype=np.int64)))
    return np.ascontiguousarray(keys, np.int64), np.ascontiguousarray(counts, np.int64), key_start.astype(np.int64)


def concatenate_trees(parts: list[ContextTrees], counts: bool = True) -> tuple[ContextTrees, np.ndarray]:
    """The trees of several models (an ensemble's members) as one :class:`ContextTrees`.

    Each part keeps its own attributes: part ``e``'s attribute ``j`` becomes attribute
    ``offset[e] + j`` of the result (its cardinalities follow), so parts whose attributes were
    discretised differently sample together, sharing one set of Stirling tables and one thread
    pool. Trees, nodes and cells keep their order, part after part. Without ``counts`` the result is
    for the HDP sampler alone, which takes the counts as its cells and never walks to a child: its
    ``leaf_counts``, ``child_start`` and ``child_table`` are empty.

    Returns
    -------
    (ContextTrees, ndarray)
        The combined trees, and ``cell_start`` of shape (len(parts) + 1,): part ``e``'s cells
        are ``cell_start[e]:cell_start[e + 1]`` of the combined cell arrays.
    """
    if not parts:
        raise ValueError("concatenate_trees needs at least one set of trees")
    n_classes = parts[0].n_classes
    attr_off = node_off = cell_off = tree_off = child_off = var_off = 0
    out = {name: [] for name in ("attrs", "tree_card", "tree_node_start", "tree_var_start", "branch_vars",
                                 "node_parent", "node_depth", "node_branch", "node_cell_start", "node_tree",
                                 "is_leaf", "child_start", "child_table", "leaf_counts", "cardinalities")}
    cell_start = [0]
    for p in parts:
        if p.n_classes != n_classes:
            raise ValueError("every part must have the same number of classes")
        shift = lambda a, off: np.where(a >= 0, a + off, a)  # noqa: E731  (-1 means none)
        out["attrs"].append(p.attrs + attr_off)
        out["tree_card"].append(p.tree_card)
        out["tree_node_start"].append(p.tree_node_start[:-1] + node_off)
        out["tree_var_start"].append(p.tree_var_start[:-1] + var_off)
        out["branch_vars"].append(shift(p.branch_vars, attr_off))
        out["node_parent"].append(shift(p.node_parent, node_off))
        out["node_depth"].append(p.node_depth)
        out["node_branch"].append(p.node_branch)
        out["node_cell_start"].append(p.node_cell_start[:-1] + cell_off)
        out["node_tree"].append(p.node_tree + tree_off)
        out["is_leaf"].append(p.is_leaf)
        if counts:
            out["child_start"].append(shift(p.child_start, child_off))
            out["child_table"].append(shift(p.child_table, node_off))
            out["leaf_counts"].append(p.leaf_counts)
        out["cardinalities"].append(np.asarray(p.cardinalities, np.int64))
        attr_off += int(np.asarray(p.cardinalities).shape[0])
        node_off += p.n_nodes
        cell_off += p.n_cells
        tree_off += p.n_trees
        child_off += int(p.child_table.shape[0])
        var_off += int(p.branch_vars.shape[0])
        cell_start.append(cell_off)
    out["tree_node_start"].append(np.array([node_off]))
    out["tree_var_start"].append(np.array([var_off]))
    out["node_cell_start"].append(np.array([cell_off]))
    dtypes = {"is_leaf": np.bool_}
    arrays = {k: np.ascontiguousarray(np.concatenate(v) if v else np.zeros(0), dtype=dtypes.get(k, np.int64))
              for k, v in out.items()}
    return ContextTrees(n_classes=int(n_classes), **arrays), np.asarray(cell_start, np.int64)


_NO_NODES = np.zeros(0, np.int64)


def without_nodes(trees: ContextTrees) -> ContextTrees:
    """``trees`` without its per-node arrays, while :func:`concatenate_trees`'s result holds them
    (:func:`nodes_from`, after, gives them back): a fit does not keep every member's nodes twice."""
    return replace(trees, node_parent=_NO_NODES, node_depth=_NO_NODES, node_branch=_NO_NODES,
                   node_cell_start=_NO_NODES, node_tree=_NO_NODES, is_leaf=np.zeros(0, np.bool_))


def nodes_from(combined: ContextTrees, part: ContextTrees, tree_lo: int) -> ContextTrees:
    """``part`` with its per-node arrays taken back from ``combined`` (:func:`concatenate_trees`'s,
    whose trees ``tree_lo`` on are ``part``'s), undoing the shifts of its nodes, cells and trees."""
    n0 = int(combined.tree_node_start[tree_lo])
    n1 = int(combined.tree_node_start[tree_lo + part.n_trees])
    parent = combined.node_parent[n0:n1]
    return replace(part, node_parent=np.where(parent >= 0, parent - n0, parent),
                   node_depth=combined.node_depth[n0:n1].copy(), node_branch=combined.node_branch[n0:n1].copy(),
                   node_cell_start=combined.node_cell_start[n0:n1 + 1] - combined.node_cell_start[n0],
                   node_tree=combined.node_tree[n0:n1] - tree_lo, is_leaf=combined.is_leaf[n0:n1].copy())


def branch_radices(trees: ContextTrees) -> np.ndarray:
    """The number of values of every branching variable in ``trees.branch_vars`` (the classes for
    ``-1``, else the attribute's cardinality): how many children a node branching on it can have."""
    vs = np.asarray(trees.branch_vars, np.int64)
    cards = np.asarray(trees.cardinalities, np.int64)
    return np.where(vs < 0, int(trees.n_classes), cards[np.maximum(vs, 0)] if cards.size else 1)


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``lo[0]..hi[0]``, then ``lo[1]..hi[1]``, ... as one int64 array (half-open ranges)."""
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    lengths = hi - lo
    before = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(lo - before, lengths)


def take_trees(trees: ContextTrees, index) -> ContextTrees:
    """Trees ``index`` (in that order) of ``trees`` as their own :class:`ContextTrees`, with the same
    attributes and cardinalities: a unit of work that samples on its own (each tree has its own random
    stream and concentration groups, so sampling a subset with those trees' generator states gives
    exactly their part of sampling all the trees). The arrays ``ContextTrees.from_nodes`` would lay out
    for those trees, cut from the flat arrays instead: every tree's nodes, cells, branching variables and
    child slots are contiguous and in tree order, so each is a range to copy, its indices shifted (a few
    milliseconds for an ensemble's hundreds of trees, where laying them out again takes tens)."""
    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    ns, vs = np.asarray(trees.tree_node_start, np.int64), np.asarray(trees.tree_var_start, np.int64)
    cs = np.asarray(trees.node_cell_start, np.int64)
    # child slots: a node above the leaves has one per value of the variable its children branch on
    node_tree = np.asarray(trees.node_tree, np.int64)
    depth = np.asarray(trees.node_depth, np.int64)
    cards = np.asarray(trees.cardinalities, np.int64)
    bv = np.asarray(trees.branch_vars, np.int64)
    radix = branch_radices(trees)
    inner = np.flatnonzero(~np.asarray(trees.is_leaf, np.bool_))
    slots = np.bincount(node_tree[inner], weights=radix[vs[node_tree[inner]] + depth[inner]],
                        minlength=trees.n_trees).astype(np.int64)
    slot_start = np.concatenate(([0], np.cumsum(slots))).astype(np.int64)

    n_len = ns[idx + 1] - ns[idx]
    new_ns = np.concatenate(([0], np.cumsum(n_len))).astype(np.int64)
    new_slot = np.concatenate(([0], np.cumsum(slots[idx]))).astype(np.int64)
    new_vs = np.concatenate(([0], np.cumsum(vs[idx + 1] - vs[idx]))).astype(np.int64)
    nodes = _ranges(ns[idx], ns[idx + 1])
    node_of = np.repeat(np.arange(idx.size, dtype=np.int64), n_len)
    shift = np.repeat(new_ns[:-1] - ns[idx], n_len)  # old node index -> new, per kept node
    parent = np.asarray(trees.node_parent, np.int64)[nodes]
    if trees.child_start.size:
        child_start = np.asarray(trees.child_start, np.int64)[nodes]
        child_start = np.where(child_start >= 0, child_start + np.repeat(new_slot[:-1] - slot_start[idx], n_len), -1)
        table = np.asarray(trees.child_table, np.int64)[_ranges(slot_start[idx], slot_start[idx + 1])]
        table = np.where(table >= 0, table + np.repeat(new_ns[:-1] - ns[idx], slots[idx]), -1)
    else:  # trees for the sampler alone (concatenate_trees without counts): none to take
        child_start = table = np.zeros(0, np.int64)
    tree_card = np.asarray(trees.tree_card, np.int64)[idx]
    return ContextTrees(
        attrs=np.asarray(trees.attrs, np.int64)[idx],
        tree_card=tree_card,
        tree_node_start=new_ns,
        tree_var_start=new_vs,
        branch_vars=bv[_ranges(vs[idx], vs[idx + 1])],
        node_parent=np.where(parent >= 0, parent + shift, -1),
        node_depth=depth[nodes],
        node_branch=np.asarray(trees.node_branch, np.int64)[nodes],
        node_cell_start=np.concatenate(([0], np.cumsum(np.repeat(tree_card, n_len)))).astype(np.int64),
        node_tree=node_of,
        is_leaf=np.asarray(trees.is_leaf, np.bool_)[nodes],
        child_start=child_start,
        child_table=table,
        leaf_counts=(np.asarray(trees.leaf_counts, np.int64)[_ranges(cs[ns[idx]], cs[ns[idx + 1]])]
                     if trees.leaf_counts.size else np.zeros(0, np.int64)),
        n_classes=int(trees.n_classes),
        cardinalities=cards,
    )


def tree_sources(trees: ContextTrees, cells=None) -> np.ndarray:
    """For every tree, the first tree (itself when there is none before it) that poses the same
    estimation problem: the same number of values, the same nodes (parents within the tree, depths,
    branch values), the same leaf counts and the same radix of every branching variable.

    The HDP sampler's result for a tree reads nothing else (its stream aside), so such trees need one
    chain, not several: an ensemble's members often share one (the same attribute with the same parents,
    every member coding both alike: categorical data). Trees are told apart by a SHA-256 digest of those
    arrays (among trees of the same sizes only); with the sampler's ``cells``
    (:class:`~hdp_plugin.hdp.sampler.SamplerCells`), their values and counts stand for the leaf counts.
    Returns an int64 array of shape (n_trees,).
    """
    n = trees.n_trees
    source = np.arange(n, dtype=np.int64)
    if n < 2:
        return source
    if cells is None and trees.leaf_counts.size != trees.n_cells:
        raise ValueError("tree_sources needs the trees' counts: their leaf counts or their sampler cells")
    ns, cs = np.asarray(trees.tree_node_start, np.int64), np.asarray(trees.node_cell_start, np.int64)
    vstart = np.asarray(trees.tree_var_start, np.int64)
    n_nodes = np.diff(ns)
    n_cells = cs[ns[1:]] - cs[ns[:-1]]
    n_vars = np.diff(vstart)
    radix = branch_radices(trees)
    # only trees whose sizes match another's are compared, by a SHA-256 digest of their arrays (what
    # is kept of a tree seen: 32 bytes, not its arrays)
    shape = np.stack([np.asarray(trees.tree_card, np.int64), n_nodes, n_cells, n_vars], axis=1)
    _, inverse, counts = np.unique(shape, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    first: dict[bytes, int] = {}
    for t in np.flatnonzero(counts[inverse] > 1):
        lo, hi = int(ns[t]), int(ns[t + 1])
        parent = np.asarray(trees.node_parent[lo:hi], np.int64)
        h = hashlib.sha256()
        for a in (shape[t], radix[int(vstart[t]):int(vstart[t + 1])], np.where(parent >= 0, parent - lo, -1),
                  trees.node_depth[lo:hi], trees.node_branch[lo:hi], *_tree_counts(trees, cells, lo, hi)):
            h.update(np.ascontiguousarray(a, np.int64))
        source[t] = first.setdefault(h.digest(), int(t))
    return source


def _tree_counts(trees: ContextTrees, cells, lo: int, hi: int) -> tuple:
    """What tells the counts of the tree of nodes ``lo .. hi - 1`` apart: its leaf counts, or its sampler
    cells' values and counts."""
    if cells is None:
        cs = trees.node_cell_start
        return (trees.leaf_counts[int(cs[lo]):int(cs[hi])],)
    c_lo, c_hi = int(cells.node_cell_start[lo]), int(cells.node_cell_start[hi])
    return cells.node_cell_start[lo:hi + 1] - c_lo, cells.cell_value[c_lo:c_hi], cells.cell_raw[c_lo:c_hi]
