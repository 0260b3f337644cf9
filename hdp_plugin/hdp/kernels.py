"""numba kernels of the collapsed Gibbs sampler (docs/method.md section 4).

Pure functions over the flat arrays of :mod:`hdp_plugin.hdp.trees` and the sampler state; the
driver in :mod:`hdp_plugin.hdp.sampler` validates, allocates and seeds. Every tree is sampled by
:func:`sample_trees` with its own random state, so trees run in parallel (threads of the
driver over bins of trees) and the result does not depend on the number of threads.

What the kernels share travels in four named tuples, each documented once here:
:class:`TreeLayout` (the trees, their tying and the lists a sweep walks: fixed for a run),
:class:`StirlingTables` (the ratio tables the draws read), :class:`SamplerState` (the counts,
concentrations, running sums and random states the iterations change) and :class:`Settings` (the
run's constants). The driver's entry points (:func:`init_trees`, :func:`sample_trees`,
:func:`flush_trees`, :func:`check_invariants`) take them whole; :func:`sample_trees` unpacks each
tree's slices of them into locals once per call and hands the per-iteration kernels
(:func:`table_sweep`, :func:`concentration_sweep`, :func:`accumulate_moving`,
:func:`flush_still`) plain arrays and scalars: a call that passes a tuple of arrays costs two
atomic reference-count updates for every array in it, used or not.

The hot loops index with ``np.uint64`` casts of their (never negative) indices: numba wraps a
negative signed index around (a shift, a mask and an add for every access, and a register to
hold the length) but not an unsigned one; on the reference's segment-challenge fold the casts cut
the sampler's instructions by a third with the same arithmetic, so the same draws.

Shapes below: ``n_trees``, ``n_nodes``, ``n_cells`` (a node has a cell per value its training rows
hold, and a rest cell for the others: :class:`TreeLayout`), ``n_groups`` (concentration groups), ``n_act`` (cells that can need a draw). Node,
cell and group indices are global (all trees of a model in one set of arrays).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS
from .rng import gamma, neg_log_beta, unit_double, xoshiro_step


class TreeLayout(NamedTuple):
    """The trees as the sampler's kernels read them, fixed for a run (but ``act``'s column 4).

    Built by :func:`hdp_plugin.hdp.sampler.tree_layout`. Every field is an ndarray, int64 unless
    said.

    Parameters
    ----------
    tree_node_start : (n_trees + 1,)
        Tree ``tr``'s nodes are ``tree_node_start[tr] .. tree_node_start[tr + 1] - 1``, breadth
        first, its root first (so the reversed range is a bottom-up sweep).
    tree_card : (n_trees,)
        Cells per node of the tree: the number of values of its attribute.
    tree_max_children : (n_trees,)
        The most children a node of the tree can have (its branching variables' largest radix).
    tree_group_start : (n_trees + 1,)
        The tree's concentration groups are ``tree_group_start[tr] .. tree_group_start[tr + 1] - 1``
        (groups never cross trees; the root's group comes first).
    tree_act_start, tree_mv_start, tree_st_start : (n_trees + 1,)
        Where the tree's runs of ``act``, ``moving`` and ``still`` start.
    node_parent : (n_nodes,)
        The parent node (-1 at a root).
    node_cell_start : (n_nodes + 1,)
        Node ``j``'s cells are ``node_cell_start[j] .. node_cell_start[j + 1] - 1``: one per value
        with a data count in the node's context (at an internal node, in its subtree), in value order,
        then its **rest cell**, whose estimate is the total of the node's other values' (its counts
        stay 0). Only observed values ever have customers, so the sampler holds no cell for the others
        (:func:`observed_cells`).
    cell_parent : (n_cells,)
        The parent's cell of the same value (a rest cell: the parent's rest cell); -1 at a root.
    node_group : (n_nodes,)
        The node's concentration group.
    is_leaf : (n_nodes,) bool
        True for a node without children (its cells hold data counts).
    leaf_counts : (n_cells,)
        The data counts of leaf cells, 0 elsewhere (rest cells included).
    group_fixed : (n_groups,) bool
        True for a group whose concentration is never sampled (the roots').
    act : (n_act, 7)
        The cells that can need a draw (:func:`active_cells`), per tree deepest nodes first, as rows
        (cell, parent cell, node, parent node, large-leaf row, node's group, parent's group). The
        large-leaf row is ``StirlingTables.big_row[cell]``, which the driver copies in again when the
        tables grow.
    moving, still : (n_moving,), (n_nodes - n_moving,)
        The nodes whose counts can change (a child cell can be drawn: the root and a top part of the
        tree) and the others (all leaves among them), each per tree in node order (:func:`moving_nodes`).
    """

    tree_node_start: np.ndarray
    tree_card: np.ndarray
    tree_max_children: np.ndarray
    tree_group_start: np.ndarray
    tree_act_start: np.ndarray
    tree_mv_start: np.ndarray
    tree_st_start: np.ndarray
    node_parent: np.ndarray
    node_cell_start: np.ndarray
    cell_parent: np.ndarray
    node_group: np.ndarray
    is_leaf: np.ndarray
    leaf_counts: np.ndarray
    group_fixed: np.ndarray
    act: np.ndarray
    moving: np.ndarray
    still: np.ndarray


class StirlingTables(NamedTuple):
    """The Stirling ratio tables a draw reads (:func:`hdp_plugin.hdp.stirling.stirling_ratios`) and
    which row each cell reads; replaced whole when the driver grows them.

    Parameters
    ----------
    rt : ndarray (big_base + large-leaf rows, columns) float64
        ``rt[n, t] = S(n, t + 1) / S(n, t)``: the dense rows ``0 .. big_base - 1`` by ``n``, then one
        row per distinct large leaf count.
    big_base : int
        The first large-leaf row of ``rt`` (the number of dense rows).
    rn_t : ndarray (columns, big_base) float64
        ``rn_t[t, n] = S(n + 1, t) / S(n, t)``, stored by ``t``.
    big_row : ndarray (n_cells,) int64
        -1 for an internal cell (its count moves: the dense rows cover it plus a margin), -2 for a
        leaf within the dense rows, else the leaf's large-leaf row (``rt[big_base + big_row]``).
    """

    rt: np.ndarray
    big_base: int
    rn_t: np.ndarray
    big_row: np.ndarray


class SamplerState(NamedTuple):
    """What the iterations change, all indexed like the trees' cells, nodes, groups or trees.

    Parameters
    ----------
    n : ndarray (n_cells,) int32 or int64
        Customers: the data counts at leaves, the sum of the children's table counts elsewhere.
    t : ndarray (n_cells,), the dtype of ``n``
        Table counts.
    node_N, node_T : ndarray (n_nodes,) int64
        The sums of ``n`` and of ``t`` over the node's cells.
    conc : ndarray (n_groups,) float64
        One concentration per group (``TreeLayout.node_group`` maps nodes to groups).
    prob : ndarray (n_cells,) float64
        Scratch: this iteration's estimates of the moving nodes (:func:`accumulate_moving`).
    est_sum : ndarray (n_cells,) float64
        The running sums of every cell's estimates since burn-in.
    wsum : ndarray (n_cells,) float64
        The sums over the current window of constant concentrations (:func:`flush_still`).
    win_k : ndarray (n_trees,) int64
        Per tree, the iterations in its current window.
    rng : ndarray (n_trees, 4) uint64
        Per tree, its xoshiro256** state (:mod:`hdp_plugin.hdp.rng`).
    """

    n: np.ndarray
    t: np.ndarray
    node_N: np.ndarray
    node_T: np.ndarray
    conc: np.ndarray
    prob: np.ndarray
    est_sum: np.ndarray
    wsum: np.ndarray
    win_k: np.ndarray
    rng: np.ndarray


class Settings(NamedTuple):
    """The constants of a run (from :func:`hdp_plugin.hdp.sampler.sample` and :mod:`hdp_plugin.config`).

    Parameters
    ----------
    burn_in : int
        Iterations before the estimates are summed.
    window : int
        Half-width of the window of candidate table counts.
    conc_every, conc_offset : int
        Concentrations are drawn at the iterations ``it`` with ``it % conc_every == conc_offset``.
    shape, rate : float
        The concentrations' Gamma(shape, rate) prior.
    max_c : float
        The largest concentration a draw may give.
    """

    burn_in: int
    window: int
    conc_every: int
    conc_offset: int
    shape: float
    rate: float
    max_c: float


class StopRule(NamedTuple):
    """Where a run ends and how each tree may stop before (the ``tolerance`` of
    :func:`hdp_plugin.hdp.sampler.sample`), for :func:`sample_trees`; built by the driver.

    A tree's running sums are copied (its open window of still-node estimates added to the copy) after
    each of the iterations ``points``, into row ``slot[i]`` of ``snap`` (rows are reused once no
    later check reads them). A point that is a check compares the averaged tables of a run of that many
    iterations with those of a run of half as many: a run of ``i`` iterations with burn-in ``b`` averages
    ``(sums at i - sums at b) / (i - b)`` (no subtraction where the sums start at ``b``: a slot of -1),
    and the tree stops there if the cells' ``weight``-weighted mean of ``|log p_i - log p_(i/2)|`` is
    below ``tol``: ``final`` gets its tables, ``stop`` its iterations. A tree that reaches ``end`` has
    its window flushed into the running sums and, under a rule, ``final`` the tables of the whole run.

    Parameters
    ----------
    end : int
        The iterations of the run (the most any tree runs).
    active : bool
        False: no rule (``points`` empty; the driver divides the running sums itself).
    tol : float
        The tolerance.
    points, slot : ndarray (n_points,) int64
        The iterations after which a tree's sums are copied, ascending, and the row of ``snap`` each
        copy goes to.
    is_check : ndarray (n_points,) bool
        True at a check.
    new_b, old_i, old_b : ndarray (n_points,) int64
        At a check ``i``: the rows of ``snap`` holding the sums at ``i``'s burn-in, at ``i // 2`` and
        at the burn-in of ``i // 2`` (-1: none to subtract).
    den_new, den_old : ndarray (n_points,) float64
        At a check ``i``: ``i - b(i)`` and ``i // 2 - b(i // 2)``.
    end_b : int
        The row holding the sums at the burn-in of ``end`` (-1: none to subtract).
    end_den : float
        ``end - b(end)``.
    snap : ndarray (rows, n_cells) float64
        The copies; a tree writes its own cells only.
    weight : ndarray (n_cells,) float64
        The cells' data counts (leaf cells; 0 elsewhere).
    tree_weight : ndarray (n_trees,) float64
        The sum of ``weight`` over each tree's cells.
    final : ndarray (n_cells,) float64
        Written: every tree's tables, once it stops or ends.
    stop : ndarray (n_trees,) int64
        The iterations each tree ran (``end`` until it stops early).
    """

    end: int
    active: bool
    tol: float
    points: np.ndarray
    slot: np.ndarray
    is_check: np.ndarray
    new_b: np.ndarray
    old_i: np.ndarray
    old_b: np.ndarray
    den_new: np.ndarray
    den_old: np.ndarray
    end_b: int
    end_den: float
    snap: np.ndarray
    weight: np.ndarray
    tree_weight: np.ndarray
    final: np.ndarray
    stop: np.ndarray


@njit(**NJIT_OPTIONS)
def digamma(x):
    """The digamma function for x > 0 (recurrence to x >= 10, then the asymptotic series).

    Parameters
    ----------
    x : float
        The argument, > 0.
    """
    result = 0.0
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    result += math.log(x) - 0.5 / x - f * (
        1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132))))
    )
    return result


@njit(**NJIT_OPTIONS)
def initial_tables(n, c):
    """Initial table count of a cell: ``n`` for n <= 1, else the expected number of tables of ``n``
    customers, floor(c (digamma(c + n) - digamma(c))), kept within 1 .. n.

    Parameters
    ----------
    n : int
        The cell's customers.
    c : float
        The concentration of the cell's node.
    """
    if n <= 1:
        return n
    v = math.floor(c * (digamma(c + n) - digamma(c)))
    return max(1, min(n, int(v)))


@njit(**NJIT_OPTIONS)
def needed_sizes(cell_lo, cell_hi, n, t, big_row, window):
    """What the next iteration can ask of the Stirling tables, from the current state.

    Returns ``(columns, dense_n)``: the largest t any draw can need (max of min(n, t + window))
    and the largest internal count (``big_row`` -1; leaves, -2 or a row of their own, have fixed
    counts that the dense rows already cover or do not need to).

    Parameters
    ----------
    cell_lo, cell_hi : int
        The cells to look at, ``cell_lo .. cell_hi - 1`` (one tree's, or all).
    n, t : ndarray (n_cells,)
        :class:`SamplerState`'s counts.
    big_row : ndarray (n_cells,) int64
        :class:`StirlingTables`' ``big_row``.
    window : int
        Half-width of the window of candidate table counts.
    """
    need = 1
    n_dense = 1
    for cell in range(cell_lo, cell_hi):
        m = min(n[cell], t[cell] + window)
        if m > need:
            need = m
        if big_row[cell] == -1 and n[cell] > n_dense:
            n_dense = n[cell]
    return need, n_dense


#: :func:`sample_trees`'s and :func:`table_sweep`'s options: numpy's error model, under which a float
#: division by zero gives inf or nan instead of raising, so numba drops the test for zero before every
#: division of a draw (no denominator of a candidate's weight can be zero: Stirling ratios,
#: concentrations and counts are > 0 there; an absent candidate's masked factor may divide by zero, and
#: is never used). table_sweep is inlined into sample_trees, whose options rule there; its own matter
#: when a test calls it alone.
SWEEP_NJIT_OPTIONS = {**NJIT_OPTIONS, "error_model": "numpy"}


@njit(inline="always", **SWEEP_NJIT_OPTIONS)  # inlined into sample_trees: see its docstring
def table_sweep(act, act_lo, act_hi, root_cell, root_cells, conc, rt, big_base, rn_t, n, t, node_N, node_T,
                window, weights, rng):
    """One bottom-up sweep of windowed Gibbs draws of every non-root table count.

    ``act[act_lo:act_hi]`` lists the tree's cells that can need a draw (data count >= 2, not at the
    root) in sweep order (deepest nodes first, values in order), as rows (cell, parent cell, node,
    parent node, large-leaf row (-1 for an internal cell, -2 for a leaf in the dense rows), node's
    group, parent's group) (see :func:`active_cells`);
    every other cell has n <= 1 for ever, and t = n is forced. ``rt[n]`` (dense rows
    ``0 .. big_base - 1``), ``rt[big_base + act[e, 4]]`` (a leaf whose data count is beyond the
    dense rows) and ``rn_t`` hold the Stirling ratios of
    :func:`hdp_plugin.hdp.stirling.stirling_ratios`. Returns
    ``(columns, dense_n)`` as :func:`needed_sizes` would after the sweep: every cell's n is final
    once the cell is visited (its children come first), and the root's n is read at the end.

    A cell's draw, among the candidates ``lo .. hi`` around its current value ``tc``: the log
    weight of candidate t' is log S(n, t') + t' log c + log S(n_p + t' - tc, t_p)
    - log Gamma(c_p + N_p + t' - tc) (constants dropped). Consecutive candidates differ by the
    factor S(n, t'+1)/S(n, t') c S(m+1, t_p)/S(m, t_p) / (c_p + N_p + d), m = n_p + d, d = t' - tc:
    ``rt[row, t'] c rn_t[t_p, m] / (cp_Np + d)``. The weights are built outwards from the current
    value (weight 1) by these factors (those below it first, then their running sums, then those
    above it, each summed as it is made); if that over- or underflows (an extreme state), they are
    rebuilt in log space from the same factors. Then one uniform picks the candidate from the
    running sums (a branch-free count).

    Most draws have few candidates (most at most two each side of tc, nearly all at most four), and
    there the loops' variable trip counts cost more than the arithmetic:
    every loop end is a branch the processor mispredicts. So a draw with at most two each side computes
    its factors and running sums without loops, and one with at most four in loops of fixed trip counts,
    absent candidates masked (their factors read clamped cells and are replaced by 0.0 in the sums,
    which adding 0.0 leaves exact): the same operations on the same values in the same order, so the same
    weights and draws as the general loops, which serve the rest. The counts are written whether or not
    the draw changed them, for the same reason.

    Written as one loop with no calls that take arrays, and the random state held in locals: every
    such call costs two atomic reference-count updates per array, which cost more than the draw
    itself (tables are indexed in place, never sliced, for the same reason).

    Parameters
    ----------
    act : ndarray (n_act, 7) int64
        :class:`TreeLayout`'s ``act``.
    act_lo, act_hi : int
        The tree's rows of ``act``.
    root_cell, root_cells : int
        The tree's root's first cell and its number of cells.
    conc : ndarray (n_groups,) float64
        :class:`SamplerState`'s concentrations.
    rt, big_base, rn_t :
        :class:`StirlingTables`' fields of those names.
    n, t, node_N, node_T : ndarray
        :class:`SamplerState`'s fields of those names, updated in place.
    window : int
        Half-width of the window of candidate table counts.
    weights : ndarray (>= max(2 window + 1, 9),) float64
        Scratch for a draw's candidate weights.
    rng : ndarray (4,) uint64
        The tree's random state, advanced in place.
    """
    need = 1
    n_dense = 1
    s0, s1, s2, s3 = rng[0], rng[1], rng[2], rng[3]
    for e in range(act_lo, act_hi):
        ue = np.uint64(e)
        cell = np.uint64(act[ue, 0])
        nx = n[cell]
        if nx <= 1:
            continue  # t = n is forced (and already holds)
        tc = t[cell]
        # n of this cell is final for the sweep (its children came first): so is its need
        m = min(nx, tc + 2 * window)
        if m > need:
            need = m
        br = act[ue, 4]
        if br == -1 and nx > n_dense:  # an internal count (a leaf's is fixed: -2 or a row of its own)
            n_dense = nx
        pcell = np.uint64(act[ue, 1])
        npx = n[pcell]
        tpx = t[pcell]
        lo = max(1, tc - window, tpx - npx + tc)
        hi = min(nx, tc + window)
        if hi <= lo:
            continue
        j = np.uint64(act[ue, 2])
        p = np.uint64(act[ue, 3])
        c = conc[np.uint64(act[ue, 5])]
        cp_Np = conc[np.uint64(act[ue, 6])] + node_N[p]
        row = nx if br < 0 else big_base + br
        k0 = tc - lo
        urow = np.uint64(row)
        utp = np.uint64(tpx)
        tt = -1  # the drawn count, once a path below has drawn it
        if k0 >= 0 and k0 <= 2 and hi - tc <= 2:
            # at most two candidates each side of tc (most draws): the factors and running
            # sums of the loops below without the loops, absent candidates masked (a sum adds 0.0, exact;
            # their factors read clamped cells and are never used), so the same weights and draw
            wl1 = (cp_Np - 1.0) / (rt[urow, np.uint64(max(tc - 1, 0))] * c * rn_t[utp, np.uint64(max(npx - 1, 0))])
            wl2 = wl1 * ((cp_Np - 2.0) / (rt[urow, np.uint64(max(tc - 2, 0))] * c
                                          * rn_t[utp, np.uint64(max(npx - 2, 0))]))
            wu1 = rt[urow, np.uint64(tc)] * c * rn_t[utp, np.uint64(npx)] / cp_Np
            wu2 = wu1 * (rt[urow, np.uint64(min(tc + 1, rt.shape[1] - 1))] * c * rn_t[utp, np.uint64(npx + 1)]
                         / (cp_Np + 1.0))
            sum_l2 = wl2 if k0 >= 2 else 0.0  # running sums from tc - 2 up
            sum_l1 = sum_l2 + (wl1 if k0 >= 1 else 0.0)
            sum_0 = sum_l1 + 1.0
            sum_u1 = sum_0 + (wu1 if hi - tc >= 1 else 0.0)
            total = sum_u1 + (wu2 if hi - tc >= 2 else 0.0)
            if total > 0.0 and total < np.inf:  # else the loops below, and log space
                bits, s0, s1, s2, s3 = xoshiro_step(s0, s1, s2, s3)
                u = unit_double(bits) * total
                # candidates below lo have running sum 0 <= u, so they count as passed
                tt = tc - 2 + (np.int64(sum_l2 <= u) + np.int64(sum_l1 <= u) + np.int64((sum_0 <= u) & (tc < hi))
                               + np.int64((sum_u1 <= u) & (tc + 1 < hi)))
        if tt < 0 and k0 >= 0 and k0 <= 4 and hi - tc <= 4:
            # up to four each side (most of the rest): the loops below with fixed trip counts (nothing
            # to mispredict at their ends), slots tc - 4 .. tc + 4 in weights[0 .. 8], absent candidates
            # masked as above
            w = 1.0
            for i in range(1, 5):
                w *= (cp_Np - i) / (rt[urow, np.uint64(max(tc - i, 0))] * c * rn_t[utp, np.uint64(max(npx - i, 0))])
                weights[np.uint64(4 - i)] = w if i <= k0 else 0.0
            total = 0.0
            for i in range(4):
                total += weights[np.uint64(i)]
                weights[np.uint64(i)] = total
            total += 1.0
            weights[4] = total
            w = 1.0
            for i in range(4):
                w *= (rt[urow, np.uint64(min(tc + i, rt.shape[1] - 1))] * c * rn_t[utp, np.uint64(npx + i)]
                      / (cp_Np + i))
                total += w if i < hi - tc else 0.0
                weights[np.uint64(5 + i)] = total
            if total > 0.0 and total < np.inf:
                bits, s0, s1, s2, s3 = xoshiro_step(s0, s1, s2, s3)
                u = unit_double(bits) * total
                k = 0
                for i in range(8):
                    k += (weights[np.uint64(i)] <= u) & (tc - 4 + i < hi)
                tt = tc - 4 + k
        if tt < 0:  # neither path above drew: the general loops (and log space)
            size = hi - lo + 1
            w = 1.0
            for tt in range(tc, lo, -1):
                d = tt - tc - 1
                w *= (cp_Np + d) / (rt[urow, np.uint64(tt - 1)] * c * rn_t[utp, np.uint64(npx + d)])
                weights[np.uint64(tt - 1 - lo)] = w
            # the prefix sums of the lower candidates, then the upper ones' weights and sums in one pass
            if k0 >= 0:
                total = weights[0] if k0 > 0 else 1.0
                for i in range(1, k0):
                    total += weights[np.uint64(i)]
                    weights[np.uint64(i)] = total
                if k0 > 0:
                    total += 1.0
                weights[np.uint64(k0)] = total
            else:  # tc = 0 (an internal cell that had no customers): every candidate is above it
                total = 0.0
            w = 1.0
            for tt in range(tc, hi):
                d = tt - tc
                w *= rt[urow, np.uint64(tt)] * c * rn_t[utp, np.uint64(npx + d)] / (cp_Np + d)
                total += w
                weights[np.uint64(tt + 1 - lo)] = total
            if not (total > 0.0 and total < np.inf):
                # log space: the same factors, summed as logs, normalised by the largest
                log_c = math.log(c)
                weights[k0] = 0.0
                lw = 0.0
                for tt in range(tc, hi):
                    d = tt - tc
                    lw += math.log(rt[row, tt]) + log_c + math.log(rn_t[tpx, npx + d]) - math.log(cp_Np + d)
                    weights[tt + 1 - lo] = lw
                lw = 0.0
                for tt in range(tc, lo, -1):
                    d = tt - tc - 1
                    lw += math.log(cp_Np + d) - math.log(rt[row, tt - 1]) - log_c - math.log(rn_t[tpx, npx + d])
                    weights[tt - 1 - lo] = lw
                wmax = -np.inf
                for i in range(size):
                    if weights[i] > wmax:
                        wmax = weights[i]
                for i in range(size):
                    weights[i] = math.exp(weights[i] - wmax)
                total = weights[0]
                for i in range(1, size):
                    total += weights[i]
                    weights[i] = total
            # the first candidate whose running sum exceeds u: count those that do not
            bits, s0, s1, s2, s3 = xoshiro_step(s0, s1, s2, s3)
            u = unit_double(bits) * total
            k = 0
            for i in range(size - 1):
                k += weights[np.uint64(i)] <= u
            tt = lo + k
        d = tt - tc
        t[cell] = tt  # unconditionally: a branch on d != 0 is mispredicted often
        node_T[j] += d
        n[pcell] += d
        node_N[p] += d
    rng[0], rng[1], rng[2], rng[3] = s0, s1, s2, s3
    for x in range(root_cells):
        if n[root_cell + x] > n_dense:
            n_dense = n[root_cell + x]
    return need, n_dense


#: nodes with at most this many customers enter a concentration draw through per-group sums
#: (:func:`concentration_sweep`); larger ones draw their own Beta variate
GROUPED_BETA_MAX = 16


@njit(**NJIT_OPTIONS)
def grouped_neg_log_beta(rng, c, hist, h):
    """sum_j -log q_j over independent q_j ~ Beta(c, N_j), for nodes counted by N_j in ``hist[h]``
    (whole numbers 1 .. ``GROUPED_BETA_MAX``); zeroes the row. See :func:`concentration_sweep`.

    Parameters
    ----------
    rng : ndarray (4,) uint64
        A random state, advanced in place.
    c : float
        The group's concentration.
    hist : ndarray (rows, GROUPED_BETA_MAX + 1) int64
        ``hist[h, N]`` counts the nodes with N customers (column 0 unused).
    h : int
        The row of ``hist`` to read (and zero).
    """
    m = 0
    acc = 0.0
    for i in range(hist.shape[1] - 1, 0, -1):
        m += hist[h, i]  # nodes with N_j >= i: each has an exponential of weight 1 / (c + i - 1)
        hist[h, i] = 0
        if m > 0:
            acc += gamma(rng, float(m)) / (c + (i - 1))
    return acc


@njit(**NJIT_OPTIONS)
def concentration_sweep(node_lo, node_hi, group_lo, group_hi, node_group, group_fixed, conc,
                        node_N, node_T, sum_T, sum_q, hist, shape, rate, max_c, rng):
    """Auxiliary-variable draw of every free concentration of one tree (Gamma(shape, rate) prior).

    Every node j of a group with N_j > 0 contributes -log q_j, q_j ~ Beta(c, N_j). For a whole
    number N, -log q ~ sum_{i < N} E_i / (c + i) with independent standard exponentials E_i (Beta(c, N)
    is the product of the independent Beta(c + i, 1) = U^(1 / (c + i))). Summed over the group's
    nodes with N_j <= ``GROUPED_BETA_MAX`` that is sum_i G_i / (c + i), G_i ~ Gamma(m_i) the sum of the
    m_i exponentials of the nodes with N_j > i: the same distribution from at most
    ``GROUPED_BETA_MAX`` gamma variates per group instead of one Beta variate per node. ``hist``
    (groups x GROUPED_BETA_MAX + 1 zeros, left zeroed) counts those nodes by N_j. ``sum_T`` and
    ``sum_q`` are scratch indexed from ``group_lo`` (the calling tree's own: a thread writing sums
    into a line another thread's tree uses would make the two threads take turns with the line).

    Parameters
    ----------
    node_lo, node_hi : int
        The tree's nodes (its root ``node_lo`` has a fixed group and is not read).
    group_lo, group_hi : int
        The tree's groups.
    node_group, group_fixed : ndarray
        :class:`TreeLayout`'s fields of those names.
    conc : ndarray (n_groups,) float64
        :class:`SamplerState`'s concentrations: the tree's free ones are drawn anew.
    node_N, node_T : ndarray (n_nodes,) int64
        :class:`SamplerState`'s node totals.
    sum_T, sum_q : ndarray (>= group_hi - group_lo,) float64
        Scratch: per group, the sum of T_j and of -log q_j.
    hist : ndarray (>= group_hi - group_lo, GROUPED_BETA_MAX + 1) int64
        Scratch, zero on entry and on return (:func:`grouped_neg_log_beta`).
    shape, rate : float
        The Gamma prior's shape and rate.
    max_c : float
        The largest concentration (draws above are capped; below 1e-12 raised to it).
    rng : ndarray (4,) uint64
        The tree's random state, advanced in place.
    """
    for h in range(group_hi - group_lo):
        sum_T[h] = 0.0
        sum_q[h] = 0.0
    for jj in range(node_lo + 1, node_hi):
        j = np.uint64(jj)
        Nj = node_N[j]
        if Nj > 0:
            g = node_group[j]
            ug = np.uint64(g)
            uh = np.uint64(g - group_lo)
            sum_T[uh] += node_T[j]
            if group_fixed[ug]:
                continue
            if Nj <= GROUPED_BETA_MAX:
                hist[uh, np.uint64(Nj)] += 1
            else:
                sum_q[uh] += neg_log_beta(rng, conc[ug], float(Nj))
    for g in range(group_lo, group_hi):
        if group_fixed[g]:
            continue
        h = g - group_lo
        sum_q[h] += grouped_neg_log_beta(rng, conc[g], hist, h)
        c = gamma(rng, shape + sum_T[h]) / (rate + sum_q[h])
        if c > max_c:
            c = max_c
        if c < 1e-12:
            c = 1e-12
        conc[g] = c


@njit(inline="always", **NJIT_OPTIONS)  # inlined into sample_trees: see its docstring
def accumulate_moving(moving, mv_lo, mv_hi, root, card, node_parent, node_group, node_cell_start, cell_parent,
                      conc, n, node_N, prob, est_sum, wsum):
    """Top-down estimates p_x = (n_x + c p_parent,x) / (N + c) of the tree's moving nodes
    ``moving[mv_lo:mv_hi]`` (top-down), whose counts can change, added to the running sums
    ``est_sum`` and to ``wsum``, the sums over the current window of constant concentrations that
    :func:`flush_still` reads. Computed as n_x r + (c r) p_parent,x with r = 1 / (N + c) once per
    node; ``prob`` keeps this iteration's estimates. A node's rest cell gets the total of its
    unobserved values' estimates, c r times the parent's estimates of those values: the parent's
    rest plus its observed values that the node lacks (summed directly, not as one minus the
    others, which would cancel to nothing where they are tiny).

    A node whose counts can change has a cell with a drawable child, so its parent's counts can
    change too: the moving nodes are a top part of the tree, each parent's estimate is this
    iteration's when its children read it, and every node below them (all leaves among them)
    has counts fixed for ever.

    Parameters
    ----------
    moving : ndarray (n_moving,) int64
        :class:`TreeLayout`'s ``moving``.
    mv_lo, mv_hi : int
        The tree's entries of ``moving``.
    root : int
        The tree's root node (its parent estimate is uniform).
    card : int
        The number of values of the tree's attribute.
    node_parent, node_group, node_cell_start, cell_parent : ndarray
        :class:`TreeLayout`'s fields of those names.
    conc, n, node_N : ndarray
        :class:`SamplerState`'s fields of those names.
    prob, est_sum, wsum : ndarray (n_cells,) float64
        :class:`SamplerState`'s fields of those names: the moving nodes' cells are written
        (``prob``) or added to.
    """
    uniform_p = 1.0 / card
    for e in range(mv_lo, mv_hi):
        j = moving[e]
        lo = node_cell_start[j]
        rest = node_cell_start[j + 1] - 1
        c = conc[node_group[j]]
        r = 1.0 / (node_N[j] + c)
        cr = c * r
        if j == root:
            for cx in range(lo, rest):
                ucx = np.uint64(cx)
                v = n[ucx] * r + cr * uniform_p
                prob[ucx] = v
                est_sum[ucx] += v
                wsum[ucx] += v
            v = cr * ((card - (rest - lo)) * uniform_p)
        else:
            pc = node_cell_start[node_parent[j]]
            prest = node_cell_start[node_parent[j] + 1] - 1
            lacked = 0.0
            for cx in range(lo, rest):
                ucx = np.uint64(cx)
                q = cell_parent[ucx]
                while pc < q:
                    lacked += prob[np.uint64(pc)]
                    pc += 1
                pc = q + 1
                v = n[ucx] * r + cr * prob[np.uint64(q)]
                prob[ucx] = v
                est_sum[ucx] += v
                wsum[ucx] += v
            while pc < prest:
                lacked += prob[np.uint64(pc)]
                pc += 1
            v = cr * (prob[np.uint64(prest)] + lacked)
        urest = np.uint64(rest)
        prob[urest] = v
        est_sum[urest] += v
        wsum[urest] += v


@njit(**NJIT_OPTIONS)
def flush_still(still, st_lo, st_hi, moving, mv_lo, mv_hi, root, card, node_parent, node_group,
                node_cell_start, cell_parent, conc, n, node_N, est_sum, wsum, k):
    """Add the estimates of the ``k`` iterations since the last flush to the still nodes
    ``still[st_lo:st_hi]`` (top-down), then start a new window.

    Between two concentration sweeps a still node's n, N and c are constant, so its estimate is
    linear in its parent's: summed over the window, W_x = k n_x r + c r W_parent,x with
    r = 1 / (N + c), where W_parent is the parent's window sum (accumulated iteration by iteration
    for a moving parent, computed here, parents first, for a still one); a rest cell's as in
    :func:`accumulate_moving`. The same sum as adding every iteration's estimate, in one pass per
    window instead of one per iteration.

    Parameters
    ----------
    still, moving : ndarray int64
        :class:`TreeLayout`'s fields of those names.
    st_lo, st_hi, mv_lo, mv_hi : int
        The tree's entries of ``still`` and of ``moving``.
    root, card, node_parent, node_group, node_cell_start, cell_parent, conc, n, node_N :
        As for :func:`accumulate_moving`.
    est_sum, wsum : ndarray (n_cells,) float64
        The running sums (the still nodes' cells are added to) and the window sums (the still nodes'
        are written, the moving nodes' zeroed): :class:`SamplerState`'s, or copies.
    k : int
        The iterations in the window (none: only the moving nodes' window sums are zeroed).
    """
    if k > 0:
        uniform_p = 1.0 / card
        for e in range(st_lo, st_hi):
            j = still[e]
            lo = node_cell_start[j]
            rest = node_cell_start[j + 1] - 1
            c = conc[node_group[j]]
            r = 1.0 / (node_N[j] + c)
            kr = k * r
            cr = c * r
            if j == root:
                for cx in range(lo, rest):
                    ucx = np.uint64(cx)
                    w = n[ucx] * kr + cr * (k * uniform_p)
                    est_sum[ucx] += w
                    wsum[ucx] = w
                w = cr * (k * ((card - (rest - lo)) * uniform_p))
            else:
                pc = node_cell_start[node_parent[j]]
                prest = node_cell_start[node_parent[j] + 1] - 1
                lacked = 0.0
                for cx in range(lo, rest):
                    ucx = np.uint64(cx)
                    q = cell_parent[ucx]
                    while pc < q:
                        lacked += wsum[np.uint64(pc)]
                        pc += 1
                    pc = q + 1
                    w = n[ucx] * kr + cr * wsum[np.uint64(q)]
                    est_sum[ucx] += w
                    wsum[ucx] = w
                while pc < prest:
                    lacked += wsum[np.uint64(pc)]
                    pc += 1
                w = cr * (wsum[np.uint64(prest)] + lacked)
            urest = np.uint64(rest)
            est_sum[urest] += w
            wsum[urest] = w
    for e in range(mv_lo, mv_hi):
        j = moving[e]
        for cx in range(node_cell_start[j], node_cell_start[j + 1]):
            wsum[np.uint64(cx)] = 0.0


@njit(**SWEEP_NJIT_OPTIONS)
def sample_trees(order, lo, hi, it_reached, it_to, layout, tables, state, settings, rule, scratch):
    """Advance the trees ``order[lo:hi]`` (one thread's batch), one after the other, to iteration
    ``it_to`` (at most ``rule.end``), each stopping early where ``rule`` says so (:class:`StopRule`:
    its sums are copied at the rule's points and, at a check, its tables compared; the tree's own
    chain only). The driver runs batches on threads of its own (the kernels release the GIL); every
    tree has its own random stream, so the result does not depend on the batches or the threads.
    A tree that has stopped, or is already at ``it_to``, is passed over.

    Every tree in turn: its nodes split (:func:`moving_nodes`) into those whose counts can change
    and the rest; ``state.wsum`` and ``state.win_k[tr]`` carry the current window of
    :func:`flush_still` from call to call (the driver flushes at the end). A tree stops short of
    ``it_to`` when the next iteration could ask for a Stirling number beyond the tables (a column
    past the last, or a dense row past the last: within one iteration an internal count grows by at
    most ``window`` per child, and a candidate looks ``window`` further); the driver then grows the
    tables and calls again from there. No random number is drawn by the check, so results do not
    depend on it. (One kernel for the bin and its trees, not a kernel per tree called from here:
    numba optimises a caller together with its callees again, so an extra level lengthens the first
    use's compilation.)

    (Not a ``prange``: a ``parallel=True`` caller compiles far more slowly, for no faster sampling;
    the driver runs this kernel on threads instead.) The two kernels of every iteration,
    :func:`table_sweep` and :func:`accumulate_moving`, are inlined here (numba's
    ``inline="always"``): a call passing arrays costs two atomic reference-count updates per array,
    which with thousands of small trees is a noticeable share of the sampler's time.

    Parameters
    ----------
    order : ndarray (n_trees,) int64
        The trees, bin by bin (:func:`balance_trees`).
    lo, hi : int
        The bin: ``order[lo:hi]``.
    it_reached : ndarray (n_trees,) int64
        Per tree, the iterations it has run; updated (below ``it_to`` when the tables must grow).
    it_to : int
        The iteration to reach.
    layout : TreeLayout
    tables : StirlingTables
    state : SamplerState
        Updated in place.
    settings : Settings
    rule : StopRule
        Its ``snap``, ``final`` and ``stop`` are written for these trees.
    scratch : ndarray (n_cells,) float64
        Scratch for the window sums of a copy (this thread's own).
    """
    end = rule.end
    points = rule.points
    for i in range(lo, hi):
        tr = order[i]
        it_from = it_reached[tr]
        if it_from >= it_to or rule.stop[tr] < end:
            continue
        # the tree's slices and the run's constants as locals, once: the loop below passes the per-
        # iteration kernels plain arrays and scalars (a tuple of arrays costs a reference-count update
        # per array and call)
        node_lo, node_hi = layout.tree_node_start[tr], layout.tree_node_start[tr + 1]
        group_lo, group_hi = layout.tree_group_start[tr], layout.tree_group_start[tr + 1]
        card, max_children = layout.tree_card[tr], layout.tree_max_children[tr]
        act, act_lo, act_hi = layout.act, layout.tree_act_start[tr], layout.tree_act_start[tr + 1]
        moving, mv_lo, mv_hi = layout.moving, layout.tree_mv_start[tr], layout.tree_mv_start[tr + 1]
        still, st_lo, st_hi = layout.still, layout.tree_st_start[tr], layout.tree_st_start[tr + 1]
        node_parent, node_group, node_cell_start = layout.node_parent, layout.node_group, layout.node_cell_start
        cell_parent, group_fixed = layout.cell_parent, layout.group_fixed
        rt, big_base, rn_t, big_row = tables.rt, tables.big_base, tables.rn_t, tables.big_row
        n, t, node_N, node_T, conc = state.n, state.t, state.node_N, state.node_T, state.conc
        prob, est_sum, wsum, win_k, rng = state.prob, state.est_sum, state.wsum, state.win_k, state.rng[tr]
        burn_in, window = settings.burn_in, settings.window
        conc_every, conc_offset = settings.conc_every, settings.conc_offset
        shape, rate, max_c = settings.shape, settings.rate, settings.max_c
        # scratch and state of this tree only, written back at the end: trees of other threads sit next
        # to this one in the shared arrays, and writes to a shared cache line make threads take turns
        weights = np.empty(max(2 * window + 1, 9), dtype=np.float64)  # table_sweep's slots
        hist = np.zeros((group_hi - group_lo, GROUPED_BETA_MAX + 1), dtype=np.int64)
        sums_T = np.zeros(group_hi - group_lo)
        sums_q = np.zeros(group_hi - group_lo)
        local_rng = rng.copy()
        k_win = win_k[tr]
        cell_lo = node_cell_start[node_lo]
        cell_hi = node_cell_start[node_hi]
        root_cells = node_cell_start[node_lo + 1] - cell_lo
        t_cap = rt.shape[1] - 1
        n_cap = big_base - 1
        need, dense_n = needed_sizes(cell_lo, cell_hi, n, t, big_row, window)
        pi = 0  # the next point of the rule
        while pi < points.shape[0] and points[pi] <= it_from:
            pi += 1
        reached = it_to
        for it in range(it_from, it_to):
            if need > t_cap or dense_n + window * (max_children + 1) > n_cap:
                # the sweep's figures are bounds taken before its draws: check the exact state
                # before giving up (else every return would cost the driver a rebuild of the tables
                # for one more iteration)
                need, dense_n = needed_sizes(cell_lo, cell_hi, n, t, big_row, window)
                if need > t_cap or dense_n + window * (max_children + 1) > n_cap:
                    reached = it
                    break
            # Step 1: table counts, bottom-up
            need, dense_n = table_sweep(act, act_lo, act_hi, cell_lo, root_cells, conc, rt, big_base, rn_t, n, t,
                                        node_N, node_T, window, weights, local_rng)
            # Step 2: concentrations every conc_every-th iteration (the still nodes' estimates of the
            # window that ends are added first, with the concentrations they were made with)
            if it % conc_every == conc_offset:
                flush_still(still, st_lo, st_hi, moving, mv_lo, mv_hi, node_lo, card, node_parent, node_group,
                            node_cell_start, cell_parent, conc, n, node_N, est_sum, wsum, k_win)
                k_win = 0
                concentration_sweep(node_lo, node_hi, group_lo, group_hi, node_group, group_fixed, conc,
                                    node_N, node_T, sums_T, sums_q, hist, shape, rate, max_c, local_rng)
            # Step 3: after burn-in, accumulate the estimates (the moving nodes' now, the still nodes'
            # at the end of the window)
            if it >= burn_in:
                accumulate_moving(moving, mv_lo, mv_hi, node_lo, card, node_parent, node_group, node_cell_start,
                                  cell_parent, conc, n, node_N, prob, est_sum, wsum)
                k_win += 1
            # Step 4: at the rule's points, a copy of the tree's sums; at a check, stop if converged
            if pi < points.shape[0] and points[pi] == it + 1:
                row = rule.snap[rule.slot[pi]]
                for x in range(cell_lo, cell_hi):
                    row[x] = est_sum[x]
                    scratch[x] = wsum[x]
                flush_still(still, st_lo, st_hi, moving, mv_lo, mv_hi, node_lo, card, node_parent, node_group,
                            node_cell_start, cell_parent, conc, n, node_N, row, scratch, k_win)
                stop_here = rule.is_check[pi] and tree_converged(rule, pi, tr, cell_lo, cell_hi)
                pi += 1
                if stop_here:
                    rule.stop[tr] = it + 1
                    reached = it + 1
                    break
        if reached == end:  # the whole run: its last window into the sums, then (under a rule) its tables
            flush_still(still, st_lo, st_hi, moving, mv_lo, mv_hi, node_lo, card, node_parent, node_group,
                        node_cell_start, cell_parent, conc, n, node_N, est_sum, wsum, k_win)
            k_win = 0
            if rule.active:
                for x in range(cell_lo, cell_hi):
                    v = est_sum[x]
                    if rule.end_b >= 0:
                        v = v - rule.snap[rule.end_b, x]
                    rule.final[x] = v / rule.end_den
        # element by element: a slice assignment would compile numba's shape-mismatch error path and its
        # string formatting, a large part of the first use's compilation
        for i in range(local_rng.shape[0]):
            rng[i] = local_rng[i]
        win_k[tr] = k_win
        it_reached[tr] = reached


@njit(**NJIT_OPTIONS)
def tree_converged(rule, pi, tr, cell_lo, cell_hi):
    """True if tree ``tr`` (cells ``cell_lo .. cell_hi - 1``) stops at the check ``rule.points[pi]``
    (:class:`StopRule`), whose sums are in ``snap`` already; then its tables go to ``rule.final``.

    Parameters
    ----------
    rule : StopRule
    pi : int
        The check's index in ``rule.points``.
    tr : int
        The tree.
    cell_lo, cell_hi : int
        The tree's cells.
    """
    snap, weight = rule.snap, rule.weight
    s_new, s_nb, s_old, s_ob = rule.slot[pi], rule.new_b[pi], rule.old_i[pi], rule.old_b[pi]
    den_new, den_old = rule.den_new[pi], rule.den_old[pi]
    total = 0.0
    for x in range(cell_lo, cell_hi):
        w = weight[x]
        if w > 0.0:
            new = snap[s_new, x]
            if s_nb >= 0:
                new = new - snap[s_nb, x]
            old = snap[s_old, x]
            if s_ob >= 0:
                old = old - snap[s_ob, x]
            total += w * abs(math.log(new / den_new) - math.log(old / den_old))
    tw = rule.tree_weight[tr]
    d = total / tw if tw > 0.0 else 0.0
    if not d < rule.tol:
        return False
    for x in range(cell_lo, cell_hi):
        new = snap[s_new, x]
        if s_nb >= 0:
            new = new - snap[s_nb, x]
        rule.final[x] = new / den_new
    return True


@njit(**NJIT_OPTIONS)
def flush_trees(layout, state):
    """Add every tree's open window of still-node estimates (:func:`flush_still`) to
    ``state.est_sum`` and close the windows (``state.win_k`` zeroed); the end of a run.

    Parameters
    ----------
    layout : TreeLayout
    state : SamplerState
        Its ``est_sum``, ``wsum`` and ``win_k`` are updated (pass copies of them to read the sums
        without touching the chain).
    """
    tree_node_start, tree_card = layout.tree_node_start, layout.tree_card
    tree_mv_start, tree_st_start = layout.tree_mv_start, layout.tree_st_start
    win_k = state.win_k
    for tr in range(tree_card.shape[0]):
        flush_still(layout.still, tree_st_start[tr], tree_st_start[tr + 1], layout.moving, tree_mv_start[tr],
                    tree_mv_start[tr + 1], tree_node_start[tr], tree_card[tr], layout.node_parent,
                    layout.node_group, layout.node_cell_start, layout.cell_parent, state.conc, state.n, state.node_N,
                    state.est_sum, state.wsum, win_k[tr])
        win_k[tr] = 0


def balance_trees(cost, n_bins):
    """Trees into ``n_bins`` bins of about equal ``cost`` (longest first, each to the lightest bin).

    Returns ``(order, bin_start)``: bin ``b`` holds ``order[bin_start[b]:bin_start[b + 1]]``,
    largest first. Threads that take one bin each finish together as far as the costs are right;
    contiguous blocks of a largest-first order would give one thread all the big trees.
    """
    n_bins = max(1, min(int(n_bins), len(cost)))
    load = np.zeros(n_bins)
    members = [[] for _ in range(n_bins)]
    for tr in np.argsort(-np.asarray(cost, dtype=np.float64), kind="stable"):
        b = int(np.argmin(load))
        members[b].append(int(tr))
        load[b] += cost[tr]
    order = np.array([tr for m in members for tr in m], dtype=np.int64)
    bin_start = np.cumsum([0] + [len(m) for m in members]).astype(np.int64)
    return order, bin_start


#: :func:`init_trees` keeps the initial table counts of data counts below this (per concentration)
INIT_MEMO = 64


@njit(**NJIT_OPTIONS)
def init_trees(layout, state):
    """Initialise every tree, children before parents: leaves get their data counts, an internal
    node's n is the sum of its children's t; t from the expected number of tables
    (:func:`initial_tables`), the root's t is 1{n > 0}. Once per run, one thread (one kernel, not a
    kernel per tree called from here: numba would optimise the callee again with its caller).

    Parameters
    ----------
    layout : TreeLayout
    state : SamplerState
        Its ``n``, ``t``, ``node_N`` and ``node_T`` are written for every cell and node, from its
        ``conc``.
    """
    # initial_tables of the counts below INIT_MEMO for the concentration last seen (every group starts
    # at the same one): two digammas a cell would be most of this kernel's time
    memo = np.full(INIT_MEMO, -1, np.int64)
    memo_c = -1.0
    for tr in range(layout.tree_card.shape[0]):
        node_lo, node_hi = layout.tree_node_start[tr], layout.tree_node_start[tr + 1]
        node_group, node_cell_start, cell_parent = layout.node_group, layout.node_cell_start, layout.cell_parent
        leaf_counts, is_leaf = layout.leaf_counts, layout.is_leaf
        conc, n, t, node_N, node_T = state.conc, state.n, state.t, state.node_N, state.node_T
        for j in range(node_lo, node_hi):
            for cx in range(node_cell_start[j], node_cell_start[j + 1]):
                n[cx] = leaf_counts[cx] if is_leaf[j] else 0
                t[cx] = 0
        for j in range(node_hi - 1, node_lo - 1, -1):
            c = conc[node_group[j]]
            N = 0
            T = 0
            for cx in range(node_cell_start[j], node_cell_start[j + 1]):
                nx = n[cx]
                if j == node_lo:
                    tx = 1 if nx > 0 else 0
                elif nx < INIT_MEMO:
                    if c != memo_c:
                        for i in range(INIT_MEMO):
                            memo[i] = -1
                        memo_c = c
                    tx = memo[nx]
                    if tx < 0:
                        tx = initial_tables(nx, c)
                        memo[nx] = tx
                else:
                    tx = initial_tables(nx, c)
                t[cx] = tx
                N += nx
                T += tx
                if j != node_lo:
                    n[cell_parent[cx]] += tx
            node_N[j] = N
            node_T[j] = T


@njit(**NJIT_OPTIONS)
def check_invariants(layout, state):
    """Return -1 if the sampler state is consistent, else the index of the first offending node.

    Checks: 1 <= t <= n where n >= 1, t = 0 where n = 0, the root's t = 1{n > 0}, an internal
    node's n = the sum of its children's t, and the node totals N and T.

    Parameters
    ----------
    layout : TreeLayout
    state : SamplerState
        Read only: its ``n``, ``t``, ``node_N`` and ``node_T``.
    """
    tree_node_start = layout.tree_node_start
    node_cell_start, cell_parent, is_leaf = layout.node_cell_start, layout.cell_parent, layout.is_leaf
    n, t, node_N, node_T = state.n, state.t, state.node_N, state.node_T
    child_sum = np.zeros(n.shape[0], dtype=np.int64)
    for tr in range(tree_node_start.shape[0] - 1):
        for j in range(tree_node_start[tr] + 1, tree_node_start[tr + 1]):
            for cx in range(node_cell_start[j], node_cell_start[j + 1]):
                child_sum[cell_parent[cx]] += t[cx]
    for tr in range(tree_node_start.shape[0] - 1):
        lo = tree_node_start[tr]
        for j in range(lo, tree_node_start[tr + 1]):
            N = 0
            T = 0
            rest = node_cell_start[j + 1] - 1
            if rest < node_cell_start[j] or n[rest] != 0 or t[rest] != 0:
                return j
            for cx in range(node_cell_start[j], node_cell_start[j + 1]):
                nx = n[cx]
                tx = t[cx]
                N += nx
                T += tx
                if nx == 0 and tx != 0:
                    return j
                if nx >= 1 and (tx < 1 or tx > nx):
                    return j
                if j == lo and tx != (1 if nx > 0 else 0):
                    return j
                if not is_leaf[j] and nx != child_sum[cx]:
                    return j
            if N != node_N[j] or T != node_T[j]:
                return j
    return -1


def active_cells(layout_parts, raw, node_group, big_row):
    """The cells that can need a draw, in sweep order, and where each tree's run of them starts.

    A cell needs a draw only while n >= 2; n never exceeds the cell's data count (an internal
    count is a sum of children's table counts), so cells with data count <= 1, and the roots'
    cells, never do. ``layout_parts`` is ``(tree_node_start, node_cell_start, cell_parent,
    node_parent)`` of a :class:`TreeLayout`. Returns ``act`` (rows: cell, parent cell, node, parent
    node, large-leaf row ``big_row[cell]``, node's group, parent's group; per tree, nodes deepest
    first and values in order; one row holds what a draw needs besides the state) and
    ``tree_act_start`` (n_trees + 1,). Column 4 must be refreshed when ``big_row`` changes.
    """
    tree_node_start, node_cell_start, cell_parent, node_parent = (np.asarray(a, np.int64) for a in layout_parts)
    return _active_rows(tree_node_start, node_cell_start, cell_parent, node_parent, raw,
                        np.asarray(node_group, np.int64), np.asarray(big_row, np.int64))


@njit(**NJIT_OPTIONS)
def _active_rows(tree_node_start, node_cell_start, cell_parent, node_parent, raw, node_group, big_row):
    """:func:`active_cells`'s rows: every tree's nodes from the last (deepest) to the first, the roots
    skipped, each node's cells with a data count of at least 2 by value; ``(act, tree_act_start)``
    (two passes over the nodes, counting then filling).

    Parameters
    ----------
    tree_node_start, node_cell_start, cell_parent, node_parent :
        :class:`TreeLayout`'s fields of those names.
    raw : ndarray (n_cells,) int64
        The cells' data counts.
    node_group : ndarray (n_nodes,) int64
        Every node's concentration group.
    big_row : ndarray (n_cells,) int64
        :class:`StirlingTables`' ``big_row``.
    """
    n_trees = tree_node_start.shape[0] - 1
    total = 0
    for tr in range(n_trees):
        for j in range(tree_node_start[tr], tree_node_start[tr + 1]):
            if node_parent[j] >= 0:
                for cell in range(node_cell_start[j], node_cell_start[j + 1]):
                    total += raw[cell] >= 2
    act = np.empty((total, 7), np.int64)
    starts = np.empty(n_trees + 1, np.int64)
    e = 0
    for tr in range(n_trees):
        starts[tr] = e
        for j in range(tree_node_start[tr + 1] - 1, tree_node_start[tr] - 1, -1):
            p = node_parent[j]
            if p < 0:
                continue
            for cell in range(node_cell_start[j], node_cell_start[j + 1]):
                if raw[cell] >= 2:
                    act[e, 0] = cell
                    act[e, 1] = cell_parent[cell]
                    act[e, 2] = j
                    act[e, 3] = p
                    act[e, 4] = big_row[cell]
                    act[e, 5] = node_group[j]
                    act[e, 6] = node_group[p]
                    e += 1
    starts[n_trees] = e
    return act, starts


@njit(**NJIT_OPTIONS)
def observed_cells(tree_node_start, tree_card, node_cell_start, node_parent, raw):
    """The sampler's cells of trees laid out densely (a cell per value of every node,
    :class:`~hdp_plugin.hdp.trees.ContextTrees`): every value with a data count (``raw`` > 0; an
    internal node's counts are its subtree's, so a node's observed values are among its parent's),
    then a rest cell per node (:class:`TreeLayout`).

    Returns ``(node_cell_start, cell_value, cell_parent, cell_raw)``: the new cells' starts per
    node (n_nodes + 1,), and per cell its value (the attribute's cardinality for a rest cell), its
    parent's cell of the same value (-1 at a root) and its data count (0 for a rest cell).

    Parameters
    ----------
    tree_node_start, tree_card, node_parent : ndarray int64
        The trees' (:class:`~hdp_plugin.hdp.trees.ContextTrees`' fields of those names).
    node_cell_start : ndarray (n_nodes + 1,) int64
        Where every node's dense cells start.
    raw : ndarray (n_dense_cells,) int64
        The dense cells' data counts (``ContextTrees.raw_counts``).
    """
    n_nodes = node_parent.shape[0]
    start = np.empty(n_nodes + 1, np.int64)
    total = 0
    for tr in range(tree_card.shape[0]):
        card = tree_card[tr]
        for j in range(tree_node_start[tr], tree_node_start[tr + 1]):
            start[j] = total
            base = node_cell_start[j]
            for x in range(card):
                total += raw[base + x] > 0
            total += 1
    start[n_nodes] = total
    value = np.empty(total, np.int64)
    parent = np.empty(total, np.int64)
    count = np.empty(total, np.int64)
    for tr in range(tree_card.shape[0]):
        card = tree_card[tr]
        for j in range(tree_node_start[tr], tree_node_start[tr + 1]):
            base = node_cell_start[j]
            cx = start[j]
            p = node_parent[j]
            pc = start[p] if p >= 0 else -1
            for x in range(card):
                if raw[base + x] > 0:
                    value[cx] = x
                    count[cx] = raw[base + x]
                    if p >= 0:
                        while value[pc] < x:  # the parent holds every value its child holds
                            pc += 1
                        parent[cx] = pc
                    else:
                        parent[cx] = -1
                    cx += 1
            value[cx] = card
            count[cx] = 0
            parent[cx] = start[p + 1] - 1 if p >= 0 else -1
    return start, value, parent, count


def moving_nodes(trees, act):
    """Split every tree's nodes into moving ones (a child cell can be drawn, so the node's counts
    can change: the root and a top part of the tree) and still ones (the rest, all leaves among
    them), each listed per tree in node order (parents before children).

    Returns ``(moving, tree_moving_start, still, tree_still_start)``.
    """
    is_moving = np.zeros(trees.n_nodes, np.bool_)
    is_moving[act[:, 3]] = True
    idx = np.arange(trees.n_nodes, dtype=np.int64)
    moving, still = idx[is_moving], idx[~is_moving]
    bounds = np.arange(trees.n_trees + 1)
    tree_mv = np.searchsorted(trees.node_tree[moving], bounds).astype(np.int64)
    tree_st = np.searchsorted(trees.node_tree[still], bounds).astype(np.int64)
    return moving, tree_mv, still, tree_st
