"""Structure learners: naive Bayes, TAN and kDB-k.

Each learner reads a :class:`~hdp_plugin.structure.counts.CountStatistics` (one counting pass)
and returns a plain :class:`~hdp_plugin.structure.base.Structure`. Ties are broken by attribute
index everywhere (stable sorts), so a structure depends only on the counts.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..errors import ParameterError
from .base import Structure
from .counts import (
    CountStatistics,
    conditional_mutual_information,
    mutual_information,
)


def mi_order(mi: np.ndarray) -> np.ndarray:
    """Attribute indices by decreasing MI with the class, ties by index."""
    return np.argsort(-np.asarray(mi, dtype=np.float64), kind="stable")


def naive_bayes(stats: CountStatistics) -> Structure:
    """Naive Bayes: the class is the only parent of every attribute.

    Parameters
    ----------
    stats : CountStatistics

    Returns
    -------
    Structure
        ``kind="nb"``, ``k=0``, every attribute kept with no attribute parent.
    """
    mi = mutual_information(stats)
    n = stats.n_attributes
    return Structure(
        kind="nb",
        k=0,
        parents=((),) * n,
        kept=tuple(range(n)),
        order=tuple(int(a) for a in mi_order(mi)),
        mi=mi,
    )


def maximum_spanning_tree(weights: np.ndarray, root: int) -> np.ndarray:
    """Prim's maximum-weight spanning tree of a complete graph, grown from ``root``.

    Parameters
    ----------
    weights : ndarray of shape (n, n)
        Symmetric edge weights (the diagonal is ignored).
    root : int
        The vertex the tree grows from; edges point away from it.

    Returns
    -------
    ndarray of shape (n,), int64
        ``parent[v]``, the vertex through which ``v`` joined the tree; ``-1`` for the root.

    Notes
    -----
    Deterministic tie-breaking: among equally heavy candidate vertices the lowest index joins
    first, and a vertex equally close to two tree vertices takes the lower-index one as parent.
    """
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[0]
    parent = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return parent
    in_tree = np.zeros(n, dtype=bool)
    in_tree[root] = True
    best = w[root].copy()
    parent[:] = root
    parent[root] = -1
    for _ in range(n - 1):
        # Step 1: the heaviest edge from the tree to a new vertex (first maximum = lowest index)
        v = int(np.argmax(np.where(in_tree, -np.inf, best)))
        in_tree[v] = True
        # Step 2: the new vertex may offer heavier edges (or equal ones from a lower index)
        row = w[v]
        better = ~in_tree & ((row > best) | ((row == best) & (v < parent)))
        best[better] = row[better]
        parent[better] = v
    return parent


def tan(stats: CountStatistics) -> Structure:
    """Tree-augmented naive Bayes (Friedman, Geiger and Goldszmidt 1997).

    The maximum-weight spanning tree over the attributes with CMI(X_i; X_j | Y) as edge weight,
    rooted at the attribute of highest MI with the class (ties by index), edges directed away
    from the root: every attribute has the class and at most one attribute parent.

    Parameters
    ----------
    stats : CountStatistics

    Returns
    -------
    Structure
        ``kind="tan"``, ``k=1``, every attribute kept.

    References
    ----------
    .. [1] N. Friedman, D. Geiger and M. Goldszmidt, "Bayesian network classifiers", Machine
       Learning 29 (1997) 131-163.
    .. [2] C. Chow and C. Liu, "Approximating discrete probability distributions with
       dependence trees", IEEE Transactions on Information Theory 14 (1968) 462-467.
    """
    mi = mutual_information(stats)
    n = stats.n_attributes
    order = mi_order(mi)
    if n == 0:
        return Structure(kind="tan", k=1, parents=(), kept=(), order=(), mi=mi)
    # Step 1: edge weights
    cmi = conditional_mutual_information(stats)
    # Step 2: maximum spanning tree rooted at the highest-MI attribute, edges away from it
    root = int(order[0])
    parent = maximum_spanning_tree(cmi, root)
    parents = tuple(() if p < 0 else (int(p),) for p in parent)
    return Structure(
        kind="tan",
        k=1,
        parents=parents,
        kept=tuple(range(n)),
        order=tuple(int(a) for a in order),
        mi=mi,
        info={"root": root},
    )


def kdb(stats: CountStatistics, k: int = config.DEFAULT_K, *, order=None) -> Structure:
    """k-dependence Bayesian classifier, kDB-k (Sahami 1996).

    Attributes are ordered by MI with the class, descending (ties by index). The attribute at
    position u takes as parents the min(u, k) earlier attributes with the highest
    CMI(X_u; X_j | Y), ties by index; parents are listed in that (branching) order.

    Parameters
    ----------
    stats : CountStatistics
    k : int, default 5
        The maximum number of attribute parents; ``k=0`` is naive Bayes.
    order : sequence of int, optional
        Another attribute order (distinct indices, possibly a subset, as an ESKDB member draws
        it); attributes left out of it are not kept. Default: decreasing MI.

    Returns
    -------
    Structure
        ``kind="kdb"``, every attribute of the order kept; its ``k`` is the k used, ``k`` capped at
        the attributes of the order less one (an attribute's parents are earlier attributes).

    References
    ----------
    .. [1] M. Sahami, "Learning limited dependence Bayesian classifiers", Proceedings of the
       Second International Conference on Knowledge Discovery and Data Mining (KDD-96),
       335-338, 1996.
    """
    k = check_k(k)
    mi = mutual_information(stats)
    if order is None:
        order = mi_order(mi)
    else:
        order = np.asarray(order, dtype=np.int64)
        if np.unique(order).size != order.size or (order.size and not 0 <= order.min() <= order.max() < stats.n_attributes):
            raise ParameterError(f"order must list distinct attribute indices below {stats.n_attributes}")
    k = min(k, max(int(order.size) - 1, 0))  # more parents than earlier attributes: none to take
    parents = [()] * stats.n_attributes
    # CMI is only needed when some attribute can take a parent (kDB-0 is naive Bayes: no pairs counted)
    if k > 0 and order.size > 1:
        from .count_kernels import kdb_parents

        cmi = np.ascontiguousarray(conditional_mutual_information(stats), np.float64)
        chosen = kdb_parents(np.ascontiguousarray(order, np.int64), cmi, int(k))
        for u in range(1, order.size):
            row = chosen[u]
            parents[int(order[u])] = tuple(int(p) for p in row[row >= 0])
    return Structure(
        kind="kdb",
        k=k,
        parents=tuple(parents),
        kept=tuple(sorted(int(a) for a in order)),
        order=tuple(int(a) for a in order),
        mi=mi,
    )


def check_k(k) -> int:
    """``k`` as an int, or :class:`ParameterError` unless it is an integer >= 0."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ParameterError(f"k must be an integer >= 0, got {k!r}")
    if k < 0:
        raise ParameterError(f"k must be >= 0, got {k!r}")
    return int(k)
