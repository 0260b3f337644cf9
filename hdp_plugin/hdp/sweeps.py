"""numba kernels of one Gibbs iteration of a tree: the table-count draws of its cells
(:func:`table_sweep`), the draws of its concentrations (:func:`concentration_sweep`) and the running sums
of its tables (:func:`accumulate_moving`, :func:`flush_still`), with the small functions they share.

:func:`hdp_plugin.hdp.kernels.sample_trees` runs them for every tree, unpacking the named tuples of
:mod:`hdp_plugin.hdp.kernels` into the plain arrays and scalars they take (see that module's docstring:
the layouts, the shapes, and why the hot loops index with ``np.uint64`` casts).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..runtime.jit import NJIT_OPTIONS
from ..seeds.xoshiro import unit_double, xoshiro_step
from .rng import gamma, neg_log_beta


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


@njit(inline="always", **SWEEP_NJIT_OPTIONS)  # inlined into kernels.sample_trees: see its docstring
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
    act : ndarray (n_act, 7) int32
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


@njit(inline="always", **NJIT_OPTIONS)  # inlined into kernels.sample_trees: see its docstring
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
