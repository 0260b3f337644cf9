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
tree's slices of them into locals once per call and hands the per-iteration kernels of
:mod:`hdp_plugin.hdp.sweeps` (``table_sweep``, ``concentration_sweep``, ``accumulate_moving``,
``flush_still``) plain arrays and scalars: a call that passes a tuple of arrays costs two
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

from ..runtime.jit import NJIT_OPTIONS
from .sweeps import (GROUPED_BETA_MAX, SWEEP_NJIT_OPTIONS, accumulate_moving, concentration_sweep, flush_still,
                     initial_tables, needed_sizes, table_sweep)


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
    cell_parent : (n_cells,) int32
        The parent's cell of the same value (a rest cell: the parent's rest cell); -1 at a root.
    node_group : (n_nodes,)
        The node's concentration group.
    is_leaf : (n_nodes,) bool
        True for a node without children (its cells hold data counts).
    leaf_counts : (n_cells,)
        The data counts of leaf cells, 0 elsewhere (rest cells included).
    group_fixed : (n_groups,) bool
        True for a group whose concentration is never sampled (the roots').
    act : (n_act, 7) int32
        The cells that can need a draw (:func:`active_cells`), per tree deepest nodes first, as rows
        (cell, parent cell, node, parent node, large-leaf row, node's group, parent's group). The
        large-leaf row is ``StirlingTables.big_row[cell]``, which the driver copies in again when the
        tables grow. int32 (every index is below ``config.MAX_MODEL_CELLS``, 2**24): half the memory
        of the largest array a run holds besides the per-cell sums.
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
    big_row : ndarray (n_cells,) int32
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
    later check reads them). ``snap`` holds the cells of one thread's batch of trees only (a tree's
    cells from ``snap_at[tree]`` on): a tree's copies are read only while it runs, and a batch runs
    to its end before the thread takes the next. A point that is a check compares the averaged tables of a run of that many
    iterations with those of a run of half as many: a run of ``i`` iterations with burn-in ``b`` averages
    ``(sums at i - sums at b) / (i - b)`` (no subtraction where the sums start at ``b``: a slot of -1),
    and the tree stops there if the cells' ``weight``-weighted mean of ``|log p_i - log p_(i/2)|`` is
    below ``tol``: its running sums (``SamplerState.est_sum``) are replaced by its tables and ``stop``
    gets its iterations. A tree that reaches ``end`` has its window flushed into the running sums and,
    under a rule, those replaced by the tables of the whole run.

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
    snap : ndarray (rows, cells of a batch) float64
        The copies of a batch's trees (the driver gives each batch its own).
    snap_at : ndarray (n_trees,) int64
        Per tree of the batch, where its cells start in ``snap``'s rows.
    weight : ndarray (n_cells,) int64
        The cells' data counts (leaf cells; 0 elsewhere): :class:`TreeLayout`'s ``leaf_counts``.
    tree_weight : ndarray (n_trees,) float64
        The sum of ``weight`` over each tree's cells.
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
    snap_at: np.ndarray
    weight: np.ndarray
    tree_weight: np.ndarray
    stop: np.ndarray


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
        Its ``snap`` (this batch's) and ``stop`` are written for these trees.
    scratch : ndarray float64
        This thread's own, twice the cells of the batch's largest tree: a tree's running and window
        sums are kept there while its copy is made.
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
                # the window flushed into the sums, copied, and the sums and window sums put back as
                # they were (the chain's window stays open)
                m = cell_hi - cell_lo
                for x in range(cell_lo, cell_hi):
                    scratch[x - cell_lo] = est_sum[x]
                    scratch[m + x - cell_lo] = wsum[x]
                flush_still(still, st_lo, st_hi, moving, mv_lo, mv_hi, node_lo, card, node_parent, node_group,
                            node_cell_start, cell_parent, conc, n, node_N, est_sum, wsum, k_win)
                row = rule.snap[rule.slot[pi]]
                at = rule.snap_at[tr] - cell_lo
                for x in range(cell_lo, cell_hi):
                    row[x + at] = est_sum[x]
                    est_sum[x] = scratch[x - cell_lo]
                    wsum[x] = scratch[m + x - cell_lo]
                stop_here = rule.is_check[pi] and tree_converged(rule, pi, tr, cell_lo, cell_hi, est_sum)
                pi += 1
                if stop_here:  # its sums are its tables now: no window is left to add
                    rule.stop[tr] = it + 1
                    reached = it + 1
                    k_win = 0
                    break
        if reached == end:  # the whole run: its last window into the sums, then (under a rule) its tables
            flush_still(still, st_lo, st_hi, moving, mv_lo, mv_hi, node_lo, card, node_parent, node_group,
                        node_cell_start, cell_parent, conc, n, node_N, est_sum, wsum, k_win)
            k_win = 0
            if rule.active:
                at = rule.snap_at[tr] - cell_lo
                for x in range(cell_lo, cell_hi):
                    v = est_sum[x]
                    if rule.end_b >= 0:
                        v = v - rule.snap[rule.end_b, x + at]
                    est_sum[x] = v / rule.end_den
        # element by element: a slice assignment would compile numba's shape-mismatch error path and its
        # string formatting, a large part of the first use's compilation
        for i in range(local_rng.shape[0]):
            rng[i] = local_rng[i]
        win_k[tr] = k_win
        it_reached[tr] = reached


@njit(**NJIT_OPTIONS)
def tree_converged(rule, pi, tr, cell_lo, cell_hi, est_sum):
    """True if tree ``tr`` (cells ``cell_lo .. cell_hi - 1``) stops at the check ``rule.points[pi]``
    (:class:`StopRule`), whose sums are in ``snap`` already; then its tables replace its running sums
    in ``est_sum``.

    Parameters
    ----------
    rule : StopRule
    pi : int
        The check's index in ``rule.points``.
    tr : int
        The tree.
    cell_lo, cell_hi : int
        The tree's cells.
    est_sum : ndarray (n_cells,) float64
        The running sums (:class:`SamplerState`'s), whose tree's cells take its tables if it stops.
    """
    snap, weight, at = rule.snap, rule.weight, rule.snap_at[tr] - cell_lo
    s_new, s_nb, s_old, s_ob = rule.slot[pi], rule.new_b[pi], rule.old_i[pi], rule.old_b[pi]
    den_new, den_old = rule.den_new[pi], rule.den_old[pi]
    total = 0.0
    for x in range(cell_lo, cell_hi):
        w = weight[x]
        if w > 0:
            new = snap[s_new, x + at]
            if s_nb >= 0:
                new = new - snap[s_nb, x + at]
            old = snap[s_old, x + at]
            if s_ob >= 0:
                old = old - snap[s_ob, x + at]
            total += w * abs(math.log(new / den_new) - math.log(old / den_old))
    tw = rule.tree_weight[tr]
    d = total / tw if tw > 0.0 else 0.0
    if not d < rule.tol:
        return False
    for x in range(cell_lo, cell_hi):
        new = snap[s_new, x + at]
        if s_nb >= 0:
            new = new - snap[s_nb, x + at]
        est_sum[x] = new / den_new
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
    if max(raw.shape[0], node_parent.shape[0]) >= 2**31:  # act's int32 columns (cells are capped far below)
        raise ValueError(f"{raw.shape[0]:,} cells in {node_parent.shape[0]:,} nodes exceed the sampler's int32 indices")
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
    big_row : ndarray (n_cells,) int32
        :class:`StirlingTables`' ``big_row``.
    """
    n_trees = tree_node_start.shape[0] - 1
    total = 0
    for tr in range(n_trees):
        for j in range(tree_node_start[tr], tree_node_start[tr + 1]):
            if node_parent[j] >= 0:
                for cell in range(node_cell_start[j], node_cell_start[j + 1]):
                    total += raw[cell] >= 2
    act = np.empty((total, 7), np.int32)
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
    value = np.empty(total, np.int32)  # values and cells are below config.MAX_CATEGORIES and MAX_MODEL_CELLS
    parent = np.empty(total, np.int32)
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
