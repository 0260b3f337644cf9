"""Slow, obviously correct twins of the numba kernels, used as test oracles.

Nothing here is fast; everything here is written to be read against docs/method.md.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np


# --------------------------------------------------------------------------------------------
# Stirling numbers
@functools.lru_cache(maxsize=None)
def stirling_exact(n: int, t: int) -> int:
    """Unsigned Stirling number of the first kind, as an exact integer (kept: a pure function of n and t,
    asked for the same cells many times over)."""
    row = [1]  # S(0, .)
    for m in range(1, n + 1):
        new = [0] * (m + 1)
        for k in range(1, m + 1):
            new[k] = (row[k - 1] if k - 1 < len(row) else 0) + (m - 1) * (row[k] if k < len(row) else 0)
        row = new
    return row[t] if t < len(row) else 0


def log_stirling(n: int, t: int) -> float:
    s = stirling_exact(n, t)
    return math.log(s) if s > 0 else -math.inf


# --------------------------------------------------------------------------------------------
# Context trees, the slow way
def contexts_by_counting(X, y, c, parents, n_classes, card_c):
    """{(depth, context tuple): counts of X_c} for every context a row reaches (a dict walk)."""
    out = {}
    for i in range(X.shape[0]):
        path = [int(y[i])] + [int(X[i, p]) for p in parents]
        for d in range(len(path) + 1):
            key = (d, tuple(path[:d]))
            out.setdefault(key, np.zeros(card_c, np.int64))[int(X[i, c])] += 1
    if not out:
        out[(0, ())] = np.zeros(card_c, np.int64)
    return out


# --------------------------------------------------------------------------------------------
# The exact posterior of a tiny tree (docs/method.md section 7)
def _group_grid(n_points=3000, c_max=4000.0):
    u = np.linspace(math.log(1e-7), math.log(c_max), n_points)
    c = np.exp(u)
    du = np.gradient(u)
    return c, du


def _log_group_integrand(c, nodes_T_N):
    """log of Gamma(2,1) prior x prod_j c^T_j Gamma(c)/Gamma(c+N_j), on the grid."""
    from scipy.special import gammaln

    lp = math.log(1.0) + np.log(c) - c  # Gamma(2,1): c e^-c / Gamma(2)
    for T, N in nodes_T_N:
        lp = lp + T * np.log(c) + gammaln(c) - gammaln(c + N)
    return lp


def exact_posterior_means(parent, leaf_counts, card, group, root_c=2.0, max_configs=2_000_000):
    """Posterior mean of every cell's estimate for one tree, by full enumeration.

    Parameters
    ----------
    parent : list of int
        Parent of every node (BFS order, node 0 the root, parent[0] = -1).
    leaf_counts : ndarray (n_nodes, card)
        Data counts of the leaves (rows of internal nodes are ignored).
    group : list of int
        Concentration group of every non-root node (group of the root is ignored: c = root_c).

    Returns
    -------
    ndarray (n_nodes, card) of posterior means of p_x = (n_x + c p_parent,x)/(N + c).
    """
    n_nodes = len(parent)
    children = [[] for _ in range(n_nodes)]
    for j in range(1, n_nodes):
        children[parent[j]].append(j)
    is_leaf = [not children[j] for j in range(n_nodes)]
    groups = sorted({group[j] for j in range(1, n_nodes)})
    grid_c, du = _group_grid()
    uniform = 1.0 / card

    # Enumerate bottom-up: node order reversed BFS; each node's t choices depend on its n,
    # which for internal nodes is the sum of the children's t.
    order = list(range(n_nodes - 1, -1, -1))
    total_w = 0.0
    acc = np.zeros((n_nodes, card))
    count = 0
    log_terms = []
    results = []

    def rec(pos, n, t):
        nonlocal count
        if pos == len(order):
            count += 1
            if count > max_configs:
                raise RuntimeError("too many configurations for the exact oracle")
            results.append((n.copy(), t.copy()))
            return
        j = order[pos]
        if is_leaf[j]:
            n[j] = leaf_counts[j]
        else:
            n[j] = sum(t[ch] for ch in children[j])
        choices = []
        for x in range(card):
            nx = int(n[j, x])
            if j == 0:
                choices.append([1 if nx > 0 else 0])
            elif nx <= 1:
                choices.append([nx])
            else:
                choices.append(list(range(1, nx + 1)))
        for combo in itertools.product(*choices):
            t[j] = combo
            rec(pos + 1, n, t)

    rec(0, np.zeros((n_nodes, card), np.int64), np.zeros((n_nodes, card), np.int64))

    # log weights of each configuration, and per-group posterior weights on the grid
    for n, t in results:
        lw = 0.0
        for j in range(n_nodes):
            for x in range(card):
                lw += log_stirling(int(n[j, x]), int(t[j, x]))
        N0, T0 = int(n[0].sum()), int(t[0].sum())
        lw += T0 * math.log(root_c) + math.lgamma(root_c) - math.lgamma(root_c + N0) + T0 * math.log(uniform)
        gw = {}
        for g in groups:
            members = [(int(t[j].sum()), int(n[j].sum())) for j in range(1, n_nodes) if group[j] == g]
            lg = _log_group_integrand(grid_c, members) + np.log(grid_c)  # dc = c du
            mx = lg.max()
            w = np.exp(lg - mx) * du
            lz = mx + math.log(w.sum())
            lw += lz
            gw[g] = w / w.sum()
        log_terms.append((lw, n, t, gw))

    lmax = max(lt[0] for lt in log_terms)
    single = len(groups) == 1 and n_nodes > 2
    for lw, n, t, gw in log_terms:
        w = math.exp(lw - lmax)
        total_w += w
        est = np.zeros((n_nodes, card))
        N = n.sum(axis=1)
        est[0] = (n[0] + root_c * uniform) / (N[0] + root_c)
        if single:
            # all non-root nodes share one c: evaluate the recursion on the grid
            g = groups[0]
            pgrid = np.zeros((n_nodes, card, grid_c.size))
            pgrid[0] = est[0][:, None]
            for j in range(1, n_nodes):
                pgrid[j] = (n[j][:, None] + grid_c[None, :] * pgrid[parent[j]]) / (N[j] + grid_c[None, :])
                est[j] = pgrid[j] @ gw[g]
        else:
            # distinct groups along every path: the recursion is linear in the parent's estimate
            for j in range(1, n_nodes):
                wg = gw[group[j]]
                a = (wg * (1.0 / (N[j] + grid_c))).sum()
                b = (wg * (grid_c / (N[j] + grid_c))).sum()
                est[j] = n[j] * a + b * est[parent[j]]
        acc += w * est
    return acc / total_w


# --------------------------------------------------------------------------------------------
# Context trees
def relaid_trees(trees, index):
    """Trees ``index`` (in that order) of ``trees`` laid out again tree by tree in NumPy
    (``ContextTrees.from_nodes``, what a model file's reader does): the oracle of the one-call kernel
    layout of ``build_trees`` and of the slicing of ``take_trees``."""
    from hdp_plugin.hdp.trees import ContextTrees, TreeNodes

    parts = []
    for tr in np.asarray(index, dtype=np.int64):
        lo, hi = int(trees.tree_node_start[tr]), int(trees.tree_node_start[tr + 1])
        vlo, vhi = int(trees.tree_var_start[tr]), int(trees.tree_var_start[tr + 1])
        card = int(trees.tree_card[tr])
        cells = trees.leaf_counts[int(trees.node_cell_start[lo]):int(trees.node_cell_start[hi])]
        parts.append(TreeNodes(
            attr=int(trees.attrs[tr]), card=card,
            branching=[int(v) for v in trees.branch_vars[vlo:vhi]],
            parent=np.where(trees.node_parent[lo:hi] >= 0, trees.node_parent[lo:hi] - lo, -1),
            depth=trees.node_depth[lo:hi].copy(), branch=trees.node_branch[lo:hi].copy(),
            counts=cells.copy()))
    return ContextTrees.from_nodes(parts, trees.n_classes, trees.cardinalities)


def same_tables(a, b) -> None:
    """Two :class:`~hdp_plugin.hdp.tables.ProbabilityTables` hold the same numbers, field by field."""
    for name in a.__dataclass_fields__:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


from hdp_plugin.model.ensemble import member_trees  # noqa: E402,F401 - the tests' name for it


def same_estimates(a, b) -> bool:
    """Two fitted classifiers hold the same estimates, network by network (cells, back-off weights, prior)."""
    return len(a.members_) == len(b.members_) and all(
        np.array_equal(x.tables.log_probs, y.tables.log_probs) and np.array_equal(x.tables.cell_value, y.tables.cell_value)
        and np.array_equal(x.tables.log_backoff, y.tables.log_backoff) and np.array_equal(x.tables.log_prior, y.tables.log_prior)
        for x, y in zip(a.members_, b.members_))


def to_sampler_cells(cells, trees, dense):
    """Per-cell values of ``trees`` (a cell per value of every node) on the sampler's ``cells``: an
    observed value's as it is, a node's rest cell the sum of its other values'."""
    raw = trees.raw_counts()
    dense_node = np.repeat(np.arange(trees.n_nodes), np.diff(trees.node_cell_start))
    node_of = np.repeat(np.arange(trees.n_nodes), np.diff(cells.node_cell_start))
    rest = cells.node_cell_start[1:] - 1
    observed = np.ones(cells.n_cells, bool)
    observed[rest] = False
    out = np.zeros(cells.n_cells, np.asarray(dense).dtype)
    out[observed] = dense[trees.node_cell_start[node_of[observed]] + cells.cell_value[observed]]
    out[rest] = np.bincount(dense_node[raw == 0], weights=dense[raw == 0], minlength=trees.n_nodes)
    return out


def to_dense_cells(cells, trees, values):
    """The sampler's per-cell ``values`` on every value of every node of ``trees`` (0 where unobserved)."""
    node_of = np.repeat(np.arange(trees.n_nodes), np.diff(cells.node_cell_start))
    rest = cells.node_cell_start[1:] - 1
    observed = np.ones(cells.n_cells, bool)
    observed[rest] = False
    out = np.zeros(trees.n_cells, np.asarray(values).dtype)
    out[trees.node_cell_start[node_of[observed]] + cells.cell_value[observed]] = values[observed]
    return out


def dense_estimates(res, trees):
    """A sampler result's estimates of every value of every node (an unobserved value's as the tables
    derive it from the node's rest and its parent)."""
    from hdp_plugin.hdp.tables import ProbabilityTables

    tables = ProbabilityTables.from_sampler(trees, res.cells, res.probabilities, np.zeros(trees.n_classes))
    return np.exp(tables.dense_log_probs())
