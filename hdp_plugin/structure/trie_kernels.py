"""Numba kernels of structure learning: pure functions over flat arrays.

Nothing here logs or raises: the counting kernel reports an out-of-range code through its
return status, and the drivers in :mod:`hdp_plugin.structure.counts` and
:mod:`hdp_plugin.structure.selective` check shapes, allocate the tables and raise. The only
allocation inside a kernel is the tries' growth by doubling, always made outside the loops that write
them (before a row, a merge, a run of rows, for the most those can add): an array variable reassigned
inside a loop keeps LLVM from holding its data pointer and length in registers through that loop, which
made the tries' inner loops 3-9 times slower. Every kernel has a slow twin in the tests.

Layouts shared with the drivers
-------------------------------
Pairwise statistics (one counting pass, :func:`count_block`):

* ``n_y[y]``;
* ``n_xy[xy_off[i] + x * C + y]`` for attribute ``i``;
* ``n_xxy[pair_off[i, j] + (xi * card[j] + xj) * C + y]`` for ``i < j``.

Context tries for SkDB (:func:`trie_insert_block`), one trie per attribute ``a`` whose depth-``d``
nodes are the observed values of its first ``d`` parents (in branching order). Every node is one
*block* of the flat int64 array ``data``, at offset ``b`` (the root's is ``root[a]``), and every value
of ``a`` seen in the node's context has a *value block* of its own, at offset ``v``::

    data[b + y]                       n(y, the node's context)                C cells
    data[b + C + x]                   offset v of the value block of x         |X_a| cells
                                      (-1: x never seen in this context)
    data[b + C + |X_a| + w]           block of the child where the next        |next parent| cells,
                                      parent takes value w (-1: none)          not at the deepest level
    data[v + y]                       n(x_a = x, y, the node's context)        C cells

Sparse in the values: a context that few rows reach (most of a deep trie's nodes: one row each) holds
the C counts of the values it saw, not C * |X_a| cells mostly zero, which on large data with many
classes was most of the memory and of the time of building the tries. A child slot or value slot
holds the block's offset itself, so descending one level or reading a value's counts is one load;
the C classes of one value are adjacent, so the leave-one-out pass reads a context's estimates for
the row's value from one or two cache lines.
*Shared tries* (:func:`stencil_counts`) count the tries of several models that code the rows alike (an
ensemble's members on nominal data) once: every distinct prefix of parents some model gives attribute
``a`` is a *stencil*, counted once over all the rows, one stencil at a time (its child map from the
stencil it extends is small, so the pass stays in cache); :func:`stencil_trie` then lays out each
model's own tries from the stencils on its paths, canonically.
``sizes`` holds ``[n_nodes, cells used]``. The layout depends on the order in which contexts are
first seen (which the passes do not care about: they read counts); :func:`trie_canonical` re-lays a
trie out in a canonical order (the roots' node blocks
first, then attribute by attribute every node depth first, children by ascending value, each node's
block followed by its value blocks by ascending value), so tries with the same counts are the same
array however their rows were split and merged (:func:`trie_merge`).

Leave-one-out sums (:func:`loo_squared_errors_block`) are fixed point and exact, so that they
are associative: ``acc[0, u, k]`` counts whole units and ``acc[1..3, u, k]`` are three digits of
62 bits below the point (units of ``2**-62``, ``2**-124``, ``2**-186``), each below ``2**62``;
``acc[4, u, k]`` counts rows whose error is not a number (an empty context with m = 0: 0/0).
Every squared error the kernel makes is held exactly: ``e = 1 - p`` with ``p`` a double in [0, 1]
is 0, or at least ``2**-53`` and a multiple of ``2**-53`` (for ``p >= 1/2``, ``1 - p`` is exact and
``p`` a multiple of ``2**-53``), so ``e2 = e * e`` is 0 or at least ``2**-106`` and so a multiple of
``2**-158``. Adding a digit below ``2**62``, an addend of at most ``2**62`` and a carry of 1 stays
below ``2**63``; ``acc[0]`` is at most the number of rows. The sum is therefore the exact sum of
the rows' squared errors, whatever their order or split.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS

#: the leave-one-out kernel rescales a row's per-class products when their sum drops below this
RESCALE_BELOW = 1e-200

#: leave-one-out squared errors are summed in FIXED_DIGITS digits of FIXED_BITS bits below the
#: point, units of 2**-186 (see the module docstring)
FIXED_BITS = 62
FIXED_DIGITS = 3
FIXED_ONE = 1 << FIXED_BITS
FIXED_SCALE = float(FIXED_ONE)
#: a double of at least this (or 0) has every bit within the first two digits (:func:`fixed_add`)
FIXED_TWO_DIGITS = 2.0 ** (52 - 2 * FIXED_BITS)

#: stencil_counts makes room for this many rows' value blocks at a time (see there)
STENCIL_ROWS = 4096

# Status codes returned by the counting kernels (the driver turns them into errors).
OK = 0
BAD_CLASS = 1
BAD_CODE = 2


# --------------------------------------------------------------------------------------------
# Pass 1: n(y), n(xi, y), n(xi, xj, y)
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def count_block(X, y, card, n_classes, xy_off, pair_off, n_y, n_xy, n_xxy, bad):
    """Add the counts of one block of rows to ``n_y``, ``n_xy`` and ``n_xxy`` in place.

    Returns a status (``OK``, ``BAD_CLASS``, ``BAD_CODE``); on error ``bad`` holds
    ``[row in block, attribute, value]`` and the counts are partial.

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of integer codes
        The block's rows; a code outside ``0 .. card[j] - 1`` stops the count with ``BAD_CODE``.
    y : ndarray (n_rows,) of integer class codes
        The block's classes (int32 from the driver); one outside ``0 .. n_classes - 1`` stops the
        count with ``BAD_CLASS``.
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities.
    n_classes : int
        The number of classes, C.
    xy_off : ndarray (n_attributes + 1,) int64
        Where attribute ``i``'s cells start in ``n_xy`` (the module docstring's layout).
    pair_off : ndarray (n_attributes, n_attributes) int64
        Where the pair ``(i, j)``, ``i < j``, starts in ``n_xxy`` (the module docstring's layout);
        the entries on and below the diagonal are not read.
    n_y : ndarray (n_classes,) int64
        The class counts, added to.
    n_xy : ndarray (xy_off[-1],) int64
        The counts n(x_i, y), added to.
    n_xxy : ndarray int64
        The counts n(x_i, x_j, y) of every pair ``i < j``, added to.
    bad : ndarray (3,) int64
        Out, on error only: ``[row in block, attribute (-1 for the class), value]``.
    """
    n_rows, n_attr = X.shape
    codes = np.empty(n_attr, dtype=np.int64)
    # stride of attribute j's value inside any pair block, in cells
    stride = np.empty(n_attr, dtype=np.int64)
    for j in range(n_attr):
        stride[j] = card[j] * n_classes
    for r in range(n_rows):
        c = np.int64(y[r])
        if c < 0 or c >= n_classes:
            bad[0] = r
            bad[1] = -1
            bad[2] = c
            return BAD_CLASS
        for j in range(n_attr):
            v = np.int64(X[r, j])
            if v < 0 or v >= card[j]:
                bad[0] = r
                bad[1] = j
                bad[2] = v
                return BAD_CODE
            codes[j] = v * n_classes + c  # (x_j, y) cell inside a row of width C
        n_y[c] += 1
        for i in range(n_attr):
            xi = codes[i] // n_classes
            n_xy[xy_off[i] + codes[i]] += 1
            for j in range(i + 1, n_attr):
                n_xxy[pair_off[i, j] + xi * stride[j] + codes[j]] += 1
    return OK


@njit(**NJIT_OPTIONS)
def count_block_marginals(X, y, card, n_classes, xy_off, n_y, n_xy, bad):
    """:func:`count_block` without the pairs: ``n_y`` and ``n_xy`` only (what naive Bayes needs).

    Returns a status as :func:`count_block` does.

    Parameters
    ----------
    X, y, card, n_classes, xy_off, n_y, n_xy, bad :
        As in :func:`count_block`: the block's rows and classes, read; ``n_y`` and ``n_xy`` added
        to; ``bad`` written on error only.
    """
    n_rows, n_attr = X.shape
    for r in range(n_rows):
        c = np.int64(y[r])
        if c < 0 or c >= n_classes:
            bad[0] = r
            bad[1] = -1
            bad[2] = c
            return BAD_CLASS
        for j in range(n_attr):
            v = np.int64(X[r, j])
            if v < 0 or v >= card[j]:
                bad[0] = r
                bad[1] = j
                bad[2] = v
                return BAD_CODE
        n_y[c] += 1
        for j in range(n_attr):
            n_xy[xy_off[j] + np.int64(X[r, j]) * n_classes + c] += 1
    return OK


@njit(**NJIT_OPTIONS)
def mutual_information_kernel(n_y, n_xy, xy_off, card, n_classes, n_rows):
    """MI(X_i; Y) in nats for every attribute, from raw frequencies (clamped at 0).

    Returns an ndarray (n_attributes,) float64 (all 0 when ``n_rows`` is 0).

    Parameters
    ----------
    n_y : ndarray (n_classes,) int64
        The class counts.
    n_xy : ndarray (xy_off[-1],) int64
        The counts n(x_i, y) (the module docstring's layout).
    xy_off : ndarray (n_attributes + 1,) int64
        Where attribute ``i``'s cells start in ``n_xy``.
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities (its length is the number of attributes).
    n_classes : int
        The number of classes, C.
    n_rows : int
        The number of rows counted (the sum of ``n_y``).
    """
    n_attr = card.shape[0]
    out = np.zeros(n_attr)
    if n_rows == 0:
        return out
    total = float(n_rows)
    for i in range(n_attr):
        base = xy_off[i]
        s = 0.0
        for x in range(card[i]):
            nx = 0
            for c in range(n_classes):
                nx += n_xy[base + x * n_classes + c]
            if nx == 0:
                continue
            for c in range(n_classes):
                n = n_xy[base + x * n_classes + c]
                if n > 0:
                    s += n * np.log((n * total) / (float(nx) * n_y[c]))
        out[i] = max(s / total, 0.0)
    return out


@njit(**NJIT_OPTIONS)
def conditional_mutual_information_kernel(
    n_y, n_xy, xy_off, n_xxy, pair_off, card, n_classes, n_rows
):
    """Symmetric matrix of CMI(X_i; X_j | Y) in nats (zero diagonal, clamped at 0).

    Returns an ndarray (n_attributes, n_attributes) float64 (all 0 when ``n_rows`` is 0).

    Parameters
    ----------
    n_y, n_xy, xy_off, card, n_classes, n_rows :
        As in :func:`mutual_information_kernel`.
    n_xxy : ndarray int64
        The counts n(x_i, x_j, y) of every pair ``i < j`` (the module docstring's layout).
    pair_off : ndarray (n_attributes, n_attributes) int64
        Where the pair ``(i, j)``, ``i < j``, starts in ``n_xxy``; the entries on and below the
        diagonal are not read.
    """
    n_attr = card.shape[0]
    out = np.zeros((n_attr, n_attr))
    if n_rows == 0:
        return out
    total = float(n_rows)
    for i in range(n_attr):
        for j in range(i + 1, n_attr):
            base = pair_off[i, j]
            s = 0.0
            for xi in range(card[i]):
                for xj in range(card[j]):
                    cell = base + (xi * card[j] + xj) * n_classes
                    for c in range(n_classes):
                        n = n_xxy[cell + c]
                        if n > 0:
                            a = n_xy[xy_off[i] + xi * n_classes + c]
                            b = n_xy[xy_off[j] + xj * n_classes + c]
                            s += n * np.log((float(n) * n_y[c]) / (float(a) * b))
            v = max(s / total, 0.0)
            out[i, j] = v
            out[j, i] = v
    return out


# --------------------------------------------------------------------------------------------
# Pass 2 (SkDB): context tries of n(x_a, y, first d parents), d = 0..K
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def _grow(arr, needed, fill):
    """``arr`` if it holds ``needed`` items, else a copy at least twice as long padded with ``fill``.

    Parameters
    ----------
    arr : ndarray (n,)
        The array (the tries' int64 ``data``); never changed.
    needed : int
        The number of items the result must hold.
    fill : scalar of ``arr``'s dtype
        The value of the copy's items from ``n`` on (the copy is ``max(needed, 2 * n, 16)`` long).
    """
    old = arr.shape[0]
    if needed <= old:
        return arr
    cap = max(needed, 2 * old, 16)
    out = np.empty(cap, dtype=arr.dtype)
    # element loops, not slice assignments: those compile numba's shape-mismatch error path with its
    # string formatting, about 3 s of the first use's compilation for this helper alone
    for i in range(old):
        out[i] = arr[i]
    for i in range(old, cap):
        out[i] = fill
    return out


@njit(**NJIT_OPTIONS)
def trie_insert_block(X, y, card, n_classes, par_ptr, par_idx, root, data, sizes):
    """Add one block of rows to every attribute's context trie.

    Nodes are created on first visit, so only contexts some row reaches exist. ``data`` grows
    by doubling; the (possibly new) array is returned and ``sizes`` is updated in place. Codes
    must already be validated (by the counting pass).

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of integer codes
        The block's rows (codes checked: each below its attribute's cardinality).
    y : ndarray (n_rows,) of integer class codes
        The block's classes (checked: each below ``n_classes``).
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities.
    n_classes : int
        The number of classes, C.
    par_ptr : ndarray (n_attributes + 1,) int64
        Attribute ``a``'s parents are ``par_idx[par_ptr[a]:par_ptr[a + 1]]``.
    par_idx : ndarray (par_ptr[-1],) int64
        The parents (attribute indices) of every attribute in turn, each's in branching order.
    root : ndarray (n_attributes,) int64
        The block of attribute ``a``'s class-only context in ``data``.
    data : ndarray int64
        The tries (the module docstring's layout), ``sizes[1]`` cells used: counts added to and new
        nodes appended, in this array or, once it must grow, in the returned copy (use that).
    sizes : ndarray (2,) int64
        ``[n_nodes, cells used]`` of ``data``, updated in place.
    """
    n_rows, n_attr = X.shape
    C = n_classes
    n_nodes = sizes[0]
    used = sizes[1]
    row_need = _row_cells(card, C, par_ptr, par_idx)
    for r in range(n_rows):
        # room for the most cells one row can add, made here and never in the loops below: an array
        # reassigned inside the inner loops keeps LLVM from holding its data pointer and length in
        # registers (those loops ran 3-9 times slower: docs/benchmarks.md, "The default against a random forest")
        if used + row_need > data.shape[0]:
            data = _grow(data, used + row_need, 0)
        c = np.int64(y[r])
        for a in range(n_attr):
            ca = card[a]
            xa = np.int64(X[r, a])
            block = root[a]
            first = par_ptr[a]
            depth = par_ptr[a + 1] - first
            d = 0
            while True:
                data[block + c] += 1
                vslot = block + C + xa
                vb = data[vslot]
                if vb < 0:  # the value's first row in this context: a value block (already 0)
                    vb = used
                    used += C
                    data[vslot] = vb
                data[vb + c] += 1
                if d == depth:
                    break
                slot = block + C + ca + np.int64(X[r, par_idx[first + d]])
                nxt = data[slot]
                if nxt < 0:
                    # a new node: class totals (already 0: cells from ``used`` on were never written,
                    # the tries start zeroed and grow zero-filled), then empty value and child slots
                    nxt = used
                    n_slots = card[par_idx[first + d + 1]] if d + 1 < depth else 0
                    used += C + ca + n_slots
                    for i in range(ca + n_slots):
                        data[nxt + C + i] = -1
                    data[slot] = nxt
                    n_nodes += 1
                block = nxt
                d += 1
    sizes[0] = n_nodes
    sizes[1] = used
    return data


@njit(inline="always", **NJIT_OPTIONS)  # inlined: a call passing arrays costs atomic reference counts
def _row_cells(card, n_classes, par_ptr, par_idx):
    """The most cells one row can add to the tries: along every attribute's path, a value block at
    each depth and a new node (class totals, value slots, child slots) at each depth below the root.

    Parameters
    ----------
    card, n_classes, par_ptr, par_idx :
        As in :func:`trie_insert_block`.
    """
    need = 0
    for a in range(par_ptr.shape[0] - 1):
        first = par_ptr[a]
        depth = par_ptr[a + 1] - first
        need += (depth + 1) * n_classes
        for d in range(depth):
            need += n_classes + card[a] + (card[par_idx[first + d + 1]] if d + 1 < depth else 0)
    return need


@njit(inline="always", **NJIT_OPTIONS)  # inlined: a call passing arrays costs atomic reference counts
def _walk_stack_size(card, par_ptr, par_idx):
    """The most nodes a depth-first walk of the tries holds on its stack: one more than the most child
    slots along any attribute's parents (every node pushes at most its children).

    Parameters
    ----------
    card, par_ptr, par_idx :
        As in :func:`trie_insert_block`.
    """
    stack_size = 1
    for a in range(par_ptr.shape[0] - 1):
        sz = 1
        for i in range(par_ptr[a], par_ptr[a + 1]):
            sz += card[par_idx[i]]
        stack_size = max(stack_size, sz)
    return stack_size


@njit(inline="always", **NJIT_OPTIONS)  # inlined, as _walk_stack_size
def _after_roots(card, n_classes, par_ptr, par_idx, root):
    """The first cell after the root blocks laid out at ``root`` (each ``C + |X_a|`` cells and its
    first parent's child slots): where a canonical layout's other blocks start.

    Parameters
    ----------
    card, n_classes, par_ptr, par_idx, root :
        As in :func:`trie_insert_block` (``root`` where the layout puts the roots).
    """
    pos = 0
    for a in range(root.shape[0]):
        first = par_ptr[a]
        n_slots = card[par_idx[first]] if par_ptr[a + 1] > first else 0
        pos = max(pos, root[a] + n_classes + card[a] + n_slots)
    return pos


@njit(**NJIT_OPTIONS)
def stencil_counts(Xt, y, card, n_classes, s_attr, s_up, s_var, s_depth, lo, hi, ids, sizes, offsets, counts, cnt, vm,
                   vc, maps):
    """Count the contexts of the stencils ``lo .. hi - 1`` (the module docstring, "shared tries"), one
    stencil at a time over all the rows.

    A stencil's nodes are numbered in the order rows first reach them; a row's node of stencil ``s``
    extending ``u`` by parent ``v`` is ``maps[map_off[s] + j * |v| + x_v]`` for its node ``j`` of ``u``
    (-1: none yet). Returns the (possibly grown) ``(cnt, vm, vc, maps)``; ``sizes``, ``offsets``
    and ``counts`` are updated in place.

    Parameters
    ----------
    Xt : ndarray (n_attributes, n_rows) of integer codes
        The rows, a column per row (codes checked by the counting pass).
    y : ndarray (n_rows,) of integer class codes
    card : ndarray (n_attributes,) int64
    n_classes : int
        C.
    s_attr, s_up, s_var, s_depth : ndarray (n_stencils,) int64
        Every stencil's attribute, the stencil it extends (-1: the attribute's class-only context), the
        parent it adds and its depth (its number of parents); a stencil comes after the one it extends,
        and in depth-first order within its attribute (so the rows' nodes of the stencil it extends are
        the last ones written at the depth above).
    lo, hi : int
        The stencils counted by this call (those before ``lo`` are counted already).
    ids : ndarray (max depth + 1, n_rows) int64
        Scratch: every row's node at each depth of the current path of stencils.
    sizes : ndarray (3, n_stencils) int64
        Every stencil's nodes, value blocks and (class, node) pairs with a row (``n_nodes``,
        ``n_values``, ``n_contexts``; written for ``lo .. hi - 1``).
    offsets : ndarray (3, n_stencils + 1) int64
        ``node_off``, ``map_off``, ``vm_off``: where each stencil's nodes start (in units of nodes: class
        totals at ``cnt[(node_off[s] + j) * C + y]``), its child map in ``maps`` and its value slots
        (``vm[vm_off[s] + j * |X_a| + x]``, the value block of x in node j, -1: none), each filled in
        from ``lo`` (``[:, lo]`` given).
    counts : ndarray (1,) int64
        The value blocks in use (``vc[b * C + y]`` is value block b's count of class y).
    cnt, vm, vc, maps : ndarray int64
        The tables; beyond what is in use, ``cnt`` and ``vc`` hold 0 and ``vm`` and ``maps`` hold -1.
    """
    n = Xt.shape[1]
    C = n_classes
    nvc = counts[0]
    n_nodes, n_values, n_contexts = sizes[0], sizes[1], sizes[2]
    node_off, map_off, vm_off = offsets[0], offsets[1], offsets[2]
    for s in range(lo, hi):
        a = s_attr[s]
        ca = card[a]
        d = s_depth[s]
        up = s_up[s]
        nb = node_off[s]
        mb = map_off[s]
        vb0 = vm_off[s]
        cv = card[s_var[s]] if up >= 0 else 1
        map_size = n_nodes[up] * cv if up >= 0 else 0
        bound = min(n, map_size) if up >= 0 else 1
        # room for every node the stencil can have (calls passing arrays cost reference counts: only to grow)
        if mb + map_size > maps.shape[0]:
            maps = _grow(maps, mb + map_size, -1)
        if (nb + bound) * C > cnt.shape[0]:
            cnt = _grow(cnt, (nb + bound) * C, 0)
        if vb0 + bound * ca > vm.shape[0]:
            vm = _grow(vm, vb0 + bound * ca, -1)
        nn = 1 if up < 0 else 0
        v = s_var[s]
        for r0 in range(0, n, STENCIL_ROWS):
            # room for a value block per row of the run, made outside the loop over its rows (an array
            # reassigned inside that loop would slow it: trie_insert_block)
            r1 = min(n, r0 + STENCIL_ROWS)
            if (nvc + r1 - r0) * C > vc.shape[0]:
                vc = _grow(vc, (nvc + r1 - r0) * C, 0)
            for r in range(r0, r1):
                if up < 0:
                    j = 0
                else:
                    key = mb + ids[d - 1, r] * cv + np.int64(Xt[v, r])
                    j = maps[key]
                    if j < 0:
                        j = nn
                        nn += 1
                        maps[key] = j
                ids[d, r] = j
                c = np.int64(y[r])
                cnt[(nb + j) * C + c] += 1
                vs = vb0 + j * ca + np.int64(Xt[a, r])
                b = vm[vs]
                if b < 0:
                    b = nvc
                    nvc += 1
                    vm[vs] = b
                vc[b * C + c] += 1
        n_nodes[s] = nn
        ctx = 0
        for i in range(nb * C, (nb + nn) * C):
            if cnt[i] > 0:
                ctx += 1
        n_contexts[s] = ctx
        n_values[s] = nvc - counts[0]
        counts[0] = nvc
        node_off[s + 1] = nb + nn
        map_off[s + 1] = mb + map_size
        vm_off[s + 1] = vb0 + nn * ca
    return cnt, vm, vc, maps


@njit(**NJIT_OPTIONS)
def stencil_trie(card, n_classes, par_ptr, par_idx, path, root_sten, out_root, used, node_off, map_off, vm_off, cnt,
                 vm, vc, maps):
    """One model's own tries, laid out canonically (:func:`trie_canonical`), from the stencils' counts
    (:func:`stencil_counts`): the array :func:`trie_canonical` gives for the tries
    :func:`trie_insert_block` counts of the same rows.

    Parameters
    ----------
    card, n_classes, par_ptr, par_idx :
        As in :func:`trie_insert_block` (the model's parents).
    path : ndarray (par_ptr[-1],) int64
        The stencil of every parent entry: attribute ``a``'s first ``d + 1`` parents are stencil
        ``path[par_ptr[a] + d]``.
    root_sten : ndarray (n_attributes,) int64
        Every attribute's class-only stencil.
    out_root : ndarray (n_attributes,) int64
        The root blocks in the result (the model's own, :class:`TrieAccumulator`'s).
    used : int
        The result's cells (from the stencils' nodes and value blocks).
    node_off, map_off, vm_off, cnt, vm, vc, maps :
        :func:`stencil_counts`'s tables.
    """
    n_attr = root_sten.shape[0]
    C = n_classes
    stack_size = _walk_stack_size(card, par_ptr, par_idx)
    st_s = np.empty(stack_size, dtype=np.int64)  # the node's stencil
    st_j = np.empty(stack_size, dtype=np.int64)  # its number in the stencil
    st_ref = np.empty(stack_size, dtype=np.int64)  # the cell of out that points to it (-1: a root)
    st_d = np.empty(stack_size, dtype=np.int64)
    out = np.empty(used, dtype=np.int64)
    pos = _after_roots(card, C, par_ptr, par_idx, out_root)
    for a in range(n_attr):
        ca = card[a]
        first = par_ptr[a]
        depth = par_ptr[a + 1] - first
        st_s[0] = root_sten[a]
        st_j[0] = 0
        st_ref[0] = -1
        st_d[0] = 0
        top = 1
        while top > 0:
            top -= 1
            s = st_s[top]
            j = st_j[top]
            d = st_d[top]
            n_slots = card[par_idx[first + d]] if d < depth else 0
            if st_ref[top] < 0:
                nb = out_root[a]
            else:
                nb = pos
                pos += C + ca + n_slots
                out[st_ref[top]] = nb
            g = (node_off[s] + j) * C
            for i in range(C):
                out[nb + i] = cnt[g + i]
            vs = vm_off[s] + j * ca
            for x in range(ca):
                b = vm[vs + x]
                if b < 0:
                    out[nb + C + x] = -1
                    continue
                out[nb + C + x] = pos
                for i in range(C):
                    out[pos + i] = vc[b * C + i]
                pos += C
            if d == depth:
                continue
            child_s = path[first + d]
            mb = map_off[child_s] + j * n_slots
            for v in range(n_slots - 1, -1, -1):  # pushed last to first: popped by ascending value
                out[nb + C + ca + v] = -1
                child = maps[mb + v]
                if child >= 0:
                    st_s[top] = child_s
                    st_j[top] = child
                    st_ref[top] = nb + C + ca + v
                    st_d[top] = d + 1
                    top += 1
    return out


@njit(**NJIT_OPTIONS)
def trie_merge(card, n_classes, par_ptr, par_idx, root, data, sizes, other):
    """Add the tries ``other`` (the same parents and roots, built from other rows) into ``data``.

    Walks every attribute's trie of ``other`` depth first, adding each node's counts to the node of
    the same context in ``data``, created (zeroed, empty child slots) where ``data`` lacks it.
    Returns the (possibly grown) ``data``; ``sizes`` is updated in place.

    Parameters
    ----------
    card, n_classes, par_ptr, par_idx, root :
        As in :func:`trie_insert_block` (the same for both tries).
    data, sizes :
        As in :func:`trie_insert_block`: the tries added to (use the returned array) and their
        ``[n_nodes, cells used]``, updated in place.
    other : ndarray int64
        The tries added, in the module docstring's layout (any order of nodes), their cells in use
        (``data`` grows by its length at most); read only.
    """
    n_attr = root.shape[0]
    C = n_classes
    n_nodes = sizes[0]
    used = sizes[1]
    # room for every cell of other, once, before the walk (each node or value block added here is one of
    # other's, as large): an array reassigned inside the loops below would slow them (trie_insert_block)
    data = _grow(data, used + other.shape[0], 0)
    stack_size = _walk_stack_size(card, par_ptr, par_idx)
    st_a = np.empty(stack_size, dtype=np.int64)  # block in data
    st_b = np.empty(stack_size, dtype=np.int64)  # block in other
    st_d = np.empty(stack_size, dtype=np.int64)  # depth
    for a in range(n_attr):
        ca = card[a]
        first = par_ptr[a]
        depth = par_ptr[a + 1] - first
        st_a[0] = root[a]
        st_b[0] = root[a]
        st_d[0] = 0
        top = 1
        while top > 0:
            top -= 1
            ba = st_a[top]
            bb = st_b[top]
            d = st_d[top]
            for i in range(C):
                data[ba + i] += other[bb + i]
            for x in range(ca):
                vo = other[bb + C + x]
                if vo < 0:
                    continue
                va = data[ba + C + x]
                if va < 0:  # a new value block (already 0, as in trie_insert_block)
                    va = used
                    used += C
                    data[ba + C + x] = va
                for i in range(C):
                    data[va + i] += other[vo + i]
            if d == depth:
                continue
            for v in range(card[par_idx[first + d]]):
                cb = other[bb + C + ca + v]
                if cb < 0:
                    continue
                ca_ = data[ba + C + ca + v]
                if ca_ < 0:  # a new node: its totals are already 0 (as in trie_insert_block)
                    ca_ = used
                    n_slots = card[par_idx[first + d + 1]] if d + 1 < depth else 0
                    used += C + ca + n_slots
                    for i in range(ca + n_slots):
                        data[ca_ + C + i] = -1
                    data[ba + C + ca + v] = ca_
                    n_nodes += 1
                st_a[top] = ca_
                st_b[top] = cb
                st_d[top] = d + 1
                top += 1
    sizes[0] = n_nodes
    sizes[1] = used
    return data


@njit(**NJIT_OPTIONS)
def trie_class_contexts(card, n_classes, par_ptr, par_idx, root, data):
    """``contexts[a, d]``, the number of (class, context) pairs with a row at depth ``d`` of attribute
    ``a``'s trie (0 beyond its parents): the nodes at depth ``d + 1`` of the attribute's context tree
    with ``d`` parents, from which the selection counts a tree's cells before choosing
    (:func:`hdp_plugin.structure.selective.tree_cells`). Read from the tries in any layout, copying
    nothing.

    Parameters
    ----------
    card, n_classes, par_ptr, par_idx, root :
        As in :func:`trie_insert_block`.
    data : ndarray int64
        The tries (the module docstring's layout), in any order of nodes.
    """
    n_attr = root.shape[0]
    C = n_classes
    stack_size = _walk_stack_size(card, par_ptr, par_idx)
    max_depth = 0
    for a in range(n_attr):
        max_depth = max(max_depth, par_ptr[a + 1] - par_ptr[a])
    st_b = np.empty(stack_size, dtype=np.int64)
    st_d = np.empty(stack_size, dtype=np.int64)
    contexts = np.zeros((n_attr, max_depth + 1), dtype=np.int64)
    for a in range(n_attr):
        ca = card[a]
        first = par_ptr[a]
        depth = par_ptr[a + 1] - first
        st_b[0] = root[a]
        st_d[0] = 0
        top = 1
        while top > 0:
            top -= 1
            b = st_b[top]
            d = st_d[top]
            for i in range(C):
                if data[b + i] > 0:
                    contexts[a, d] += 1
            if d == depth:
                continue
            for v in range(card[par_idx[first + d]]):
                child = data[b + C + ca + v]
                if child >= 0:
                    st_b[top] = child
                    st_d[top] = d + 1
                    top += 1
    return contexts


@njit(**NJIT_OPTIONS)
def trie_canonical(card, n_classes, par_ptr, par_idx, root, data, used):
    """The tries of ``data`` (``used`` cells) laid out canonically: the roots' node blocks where they
    are, then attribute by attribute the root's value blocks and every other node in depth-first
    preorder, children by ascending parent value, each node's block followed by its value blocks by
    ascending value.

    Returns the new ndarray (used,) int64 (``data`` is not changed); :func:`trie_class_contexts` reads
    the class contexts of either layout.

    Parameters
    ----------
    card, n_classes, par_ptr, par_idx, root :
        As in :func:`trie_insert_block`.
    data : ndarray int64
        The tries (the module docstring's layout), in any order of nodes.
    used : int
        The cells of ``data`` in use (``sizes[1]`` of :func:`trie_insert_block`).
    """
    n_attr = root.shape[0]
    C = n_classes
    out = np.empty(used, dtype=np.int64)
    pos = _after_roots(card, C, par_ptr, par_idx, root)
    stack_size = _walk_stack_size(card, par_ptr, par_idx)
    st_old = np.empty(stack_size, dtype=np.int64)  # the node's block in data
    st_ref = np.empty(stack_size, dtype=np.int64)  # the cell of out that points to it (-1: a root)
    st_d = np.empty(stack_size, dtype=np.int64)
    for a in range(n_attr):
        ca = card[a]
        first = par_ptr[a]
        depth = par_ptr[a + 1] - first
        st_old[0] = root[a]
        st_ref[0] = -1
        st_d[0] = 0
        top = 1
        while top > 0:
            top -= 1
            ob = st_old[top]
            d = st_d[top]
            n_slots = card[par_idx[first + d]] if d < depth else 0
            if st_ref[top] < 0:
                nb = root[a]
            else:
                nb = pos
                pos += C + ca + n_slots
                out[st_ref[top]] = nb
            for i in range(C):
                out[nb + i] = data[ob + i]
            for x in range(ca):
                vo = data[ob + C + x]
                if vo < 0:
                    out[nb + C + x] = -1
                    continue
                out[nb + C + x] = pos
                for i in range(C):
                    out[pos + i] = data[vo + i]
                pos += C
            for v in range(n_slots - 1, -1, -1):  # pushed last to first: popped by ascending value
                out[nb + C + ca + v] = -1
                child = data[ob + C + ca + v]
                if child >= 0:
                    st_old[top] = child
                    st_ref[top] = nb + C + ca + v
                    st_d[top] = d + 1
                    top += 1
    return out


# --------------------------------------------------------------------------------------------
# Pass 3 (SkDB): leave-one-out squared errors of every (n*, k*) in one pass over the rows
# --------------------------------------------------------------------------------------------
@njit(**NJIT_OPTIONS)
def loo_squared_errors_block(
    X, y, card, n_classes, order, par_ptr, par_idx, root, data, n_y, n_rows_total, m, hierarchical, max_k, acc,
):
    """Add one block's leave-one-out squared errors ``(1 - p(y_i | x_i))^2`` to ``acc``.

    ``acc[:, u, k]`` accumulates, in fixed point (:func:`fixed_add`, the module docstring), the
    error of the model made of the class and the first ``u`` attributes of ``order`` with at most
    ``k`` parents each; ``u = 0`` is the class prior alone. The sum is exact, so it is the same
    whatever order or split of the rows it is taken over. Estimates are m-estimates from the counts
    with the row itself removed: flat, ``(n(x, c) + m / |X|) / (n(c) + m)`` in every context, as the
    published SkDB has them, or ``hierarchical``, ``(n(x, c) + m p') / (n(c) + m)`` where ``p'`` is
    the estimate of the context one level up (``1 / |X|`` above the class-only one), which scores
    deep contexts as HDP tables estimate them (docs/method.md, "SkDB"). Each k's posterior is formed
    as the published SkDB forms it: walking
    attribute ``a``'s context from the class-only node down its parents,

    * the estimate at depth ``d`` is multiplied into the posterior of ``k = d``;
    * before descending, if the child context for the row's next parent value holds fewer than
      2 rows with the row's value of ``a`` (over all classes, the row included), the walk stops
      and the depth-``d`` estimate is multiplied into ``k = d + 1`` too (back-off);
    * where the walk stops (back-off or the deepest context), that k's whole posterior is copied
      into every larger k.

    The per-class products are kept in linear space and normalised only to read p(y_i | x_i) off
    them, which avoids a log and an exp per (row, attribute, k, class); they are rescaled when
    their sum falls below ``RESCALE_BELOW``, so any number of attributes is safe from underflow.
    Where a walk stops at ``k = s``, every ``k >= s`` gets the same error: it is added once, to a
    block-local sum that :func:`_add_suffix_sums` adds to every ``k >= s`` at the end of the block; the
    errors of ``k < s`` go to another block-local sum, added by :func:`fixed_merge` (the sums are
    exact, so this is the same sum as adding each error to ``acc`` where it belongs).

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of unsigned integer codes
        The block's rows (codes checked: each below its attribute's cardinality).
    y : ndarray (n_rows,) of integer class codes
        The block's classes.
    card : ndarray (n_attributes,) int64
        The attributes' cardinalities.
    n_classes : int
        The number of classes, C.
    order : ndarray (n_order,) int64
        The attributes in the order they join the model (by mutual information with the class).
    par_ptr, par_idx, root, data : ndarray int64
        The context tries (:class:`~hdp_plugin.structure.selective.ContextTries`, the module
        docstring): attribute ``a``'s parents are ``par_idx[par_ptr[a]:par_ptr[a + 1]]`` in
        branching order, its class-only context is the block at ``root[a]`` of ``data``. The counts
        are those of all the rows, this block's included.
    n_y : ndarray (n_classes,) int64
        The class counts of all the rows.
    n_rows_total : float
        The number of all the rows.
    m : float
        The m-estimate's m.
    hierarchical : bool
        Each context's estimate smoothed towards its parent context's (True) or towards the uniform
        distribution (False, the published rule).
    max_k : int
        The most parents per attribute.
    acc : ndarray (FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        The fixed-point sums, added to (the module docstring).
    """
    n_rows = X.shape[0]
    n_attr = order.shape[0]
    C = n_classes
    post = np.empty((max_k + 1, C))
    tail = np.empty(C)
    prior = np.empty(C)
    up = np.empty(C)  # hierarchical: the estimates of the context one level up, per class
    # the block's sums: rows 0-4 the errors of one k, rows 5-9 (``suffix[:, u, s]``) those that every k >= s
    # takes (added to acc at the end, by fixed_merge and _add_suffix_sums); a row's k picks its sum by
    # index, not by a branch (one the processor mispredicts at every walk's end: the pass took 12-36% longer)
    both = np.zeros((2 * (FIXED_DIGITS + 2), acc.shape[1], acc.shape[2]), np.int64)
    n_loo = n_rows_total - 1.0  # rows left after removing this one
    for r in range(n_rows):
        yi = np.int64(y[r])
        # Step 1: class prior, (n_y + 1/C) / (N + 1) without this row
        s = 0.0
        for c in range(C):
            v = n_y[c] + 1.0 / C
            if c == yi:
                v -= 1.0
            prior[c] = v / (n_loo + 1.0)
            s += prior[c]
        for c in range(C):
            prior[c] /= s
        e = 1.0 - prior[yi]
        # every k's products start as the prior; rows above ``eq`` all hold ``tail`` without being written
        # (_materialize writes them when a deeper estimate is about to be multiplied in)
        for c in range(C):
            post[0, c] = prior[c]
            tail[c] = prior[c]
        eq = 0
        # every k takes the prior's error (int64 arguments: one specialisation)
        fixed_add(both, np.int64(FIXED_DIGITS + 2), np.int64(0), np.int64(0), e * e)
        # Step 2: add attributes in MI order
        for u in range(n_attr):
            a = order[u]
            ca = card[a]
            xa = np.int64(X[r, a])
            first = par_ptr[a]
            depth = par_ptr[a + 1] - first
            # walk down the row's path (it exists, with a value block for xa: the row itself was counted)
            block = root[a]
            vb = data[block + C + xa]
            if hierarchical:
                for c in range(C):
                    up[c] = 1.0 / ca
            d = 0
            stop = 0
            while True:
                eq = _materialize(post, tail, eq, np.int64(d), C)
                _multiply_estimates(post, np.int64(d), data, block, vb, ca, yi, C, m, hierarchical, up)
                if d == depth:
                    stop = d
                    break
                child = data[block + C + ca + np.int64(X[r, par_idx[first + d]])]
                child_vb = data[child + C + xa]
                cnt = 0
                if child_vb >= 0:
                    for c in range(C):
                        cnt += data[child_vb + c]
                if cnt < 2:  # back off: the depth-d estimate serves k = d + 1 as well
                    eq = _materialize(post, tail, eq, d + 1, C)
                    if hierarchical:  # ``up`` holds it
                        for c in range(C):
                            post[d + 1, c] *= up[c]
                    else:
                        _multiply_estimates(post, d + 1, data, block, vb, ca, yi, C, m, False, up)
                    stop = d + 1
                    break
                block = child
                vb = child_vb
                d += 1
            # every larger k takes the walk's last posterior: rows above stop stand for row stop
            eq = stop
            # Step 3: every k's squared error after the first u + 1 attributes (rows above eq hold row
            # eq's products, so its sum, error and rescaling: computed once, and its error added once
            # for every k >= eq)
            for k in range(eq + 1):
                s = 0.0
                for c in range(C):
                    s += post[k, c]
                e = 1.0 - post[k, yi] / s  # exactly 0 when C = 1
                fixed_add(both, np.int64(k == eq) * (FIXED_DIGITS + 2), u + 1, k, e * e)
                if s < RESCALE_BELOW:  # keep the unnormalised products away from underflow
                    for c in range(C):
                        post[k, c] /= s
            for c in range(C):
                tail[c] = post[eq, c]
    fixed_merge(acc, both[:FIXED_DIGITS + 2])
    _add_suffix_sums(acc, both[FIXED_DIGITS + 2:])


@njit(**NJIT_OPTIONS)
def _add_suffix_sums(acc, suffix):
    """Add to every ``acc[:, u, k]`` the fixed-point sums ``suffix[:, u, s]`` of every ``s <= k``,
    exactly (a running sum over ``k``, added cell by cell).

    Parameters
    ----------
    acc : ndarray (FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        The fixed-point sums (the module docstring), added to.
    suffix : ndarray int64, the shape of ``acc``
        Sums each of which every larger ``k`` takes too; read only.
    """
    run = np.zeros(FIXED_DIGITS + 2, np.int64)
    for u in range(acc.shape[1]):
        for j in range(FIXED_DIGITS + 2):
            run[j] = 0
        for k in range(acc.shape[2]):
            _fixed_add_digits(run, suffix[:, u, k])
            _fixed_add_digits(acc[:, u, k], run)


@njit(inline="always", **NJIT_OPTIONS)
def _fixed_add_digits(to, add):
    """``to += add``, exactly, for one fixed-point sum each (the module docstring).

    Parameters
    ----------
    to : ndarray (FIXED_DIGITS + 2,) int64
        The sum added to.
    add : ndarray (FIXED_DIGITS + 2,) int64
        The sum added; read only.
    """
    c = 0
    for j in range(FIXED_DIGITS, 0, -1):
        lo = to[j] + add[j] + c  # both digits < 2**62
        c = 0
        if lo >= FIXED_ONE:
            lo -= FIXED_ONE
            c = 1
        to[j] = lo
    to[0] += add[0] + c
    to[FIXED_DIGITS + 1] += add[FIXED_DIGITS + 1]


@njit(inline="always", **NJIT_OPTIONS)  # inlined, as _multiply_estimates
def _materialize(post, tail, eq, r, C):
    """Write ``tail`` (what they hold) into rows ``eq + 1 .. r`` of ``post`` before row ``r`` is multiplied
    into; returns the new ``eq`` (``max(eq, r)``).

    Parameters
    ----------
    post : ndarray (max_k + 1, C) float64
        The row's per-class products; rows above ``eq`` hold ``tail`` but are not written.
    tail : ndarray (C,) float64
        The products of every row above ``eq``.
    eq : int
        The last row written.
    r : int
        The row about to be multiplied into.
    C : int
        The number of classes.
    """
    if r <= eq:
        return eq
    for k in range(eq + 1, r + 1):
        for c in range(C):
            post[k, c] = tail[c]
    return r


@njit(inline="always", **NJIT_OPTIONS)  # inlined: a call passing arrays costs atomic reference counts
def _multiply_estimates(post, k, data, block, vb, ca, yi, C, m, hierarchical, up):
    """post[k, c] *= the m-estimate of p(x_a | c, the block's context), the row left out: flat, or
    ``hierarchical`` (smoothed towards ``up``, the parent context's estimates, which it then holds).

    Parameters
    ----------
    post : ndarray (max_k + 1, C) float64
        The row's unnormalised per-class products, one row per k; row ``k`` is multiplied in place.
    k : int
        The row of ``post``.
    data : ndarray int64
        The context tries (the module docstring's layout).
    block : int
        The context's node block in ``data`` (its class totals n(y, context) first).
    vb : int
        The value block of the row's value of the attribute in that context (its counts by class).
    ca : int
        The attribute's cardinality, ``|X_a|``.
    yi : int
        The row's class (its own count is taken off that class's cells).
    C : int
        The number of classes.
    m : float
        The m-estimate's m.
    hierarchical : bool
        Smooth towards ``up`` (and write this context's estimates into it) instead of ``1 / ca``.
    up : ndarray (C,) float64
        Hierarchical: the parent context's estimates (``1 / ca`` above the class-only context).
    """
    for c in range(C):
        own = 1.0 if c == yi else 0.0
        den = data[block + c] - own + m
        if hierarchical:
            if den > 0.0:  # else an empty context with m = 0: its parent's estimate
                up[c] = (data[vb + c] - own + m * up[c]) / den
            post[k, c] *= up[c]
        elif den > 0.0:
            post[k, c] *= (data[vb + c] - own + m / ca) / den
        else:  # an empty context with m = 0: uniform
            post[k, c] /= ca


@njit(inline="always", **NJIT_OPTIONS)  # inlined into the passes, as _multiply_estimates
def fixed_add(acc, at, u, k, e2):
    """Add ``e2`` (a squared error, in [0, 1]) exactly to the fixed-point sum ``acc[at:at + 5, u, k]``
    (the module docstring); anything else (NaN) is counted in ``acc[at + 4, u, k]``.

    Parameters
    ----------
    acc : ndarray (>= at + FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        Fixed-point sums (the module docstring), from row ``at`` on; ``acc[at:at + 5, u, k]`` is added to.
    at : int
        The sum's first row (its units): 0 for a sum array of its own.
    u, k : int
        The sum to add to: the first ``u`` attributes of the order, at most ``k`` parents each.
    e2 : float
        The squared error, in [0, 1] (anything else is counted as not a number); added exactly
        when a multiple of ``2**-186`` (every error of :func:`loo_squared_errors_block` is), with
        the last digit rounded otherwise.

    Almost every error is 0 or at least ``FIXED_TWO_DIGITS``: its bits then lie within the first two
    digits below the point, both taken exactly, and added with carries computed, not branched on (a
    branch on the error's size is one the processor mispredicts about as often as not: the
    leave-one-out pass 5-7% slower on credit-g and the reference's segment-challenge fold); the rest
    (smaller errors, not a number) take the three digits' general path.
    """
    if (e2 >= FIXED_TWO_DIGITS and e2 <= 1.0) or e2 == 0.0:
        # e2 * 2**62 is exact with a fraction in units of 2**-62 at least (e2's last bit is 2**-124 or
        # above); e2 = 1 gives d1 = 2**62, which carries one unit. Each sum stays below 2**63: a digit
        # below 2**62, an addend of at most 2**62 (then d2 = 0 and no carry) or below it, a carry of 1.
        x = e2 * FIXED_SCALE
        d1 = np.floor(x)
        lo = acc[at + 2, u, k] + np.int64((x - d1) * FIXED_SCALE)
        c = np.int64(lo >= FIXED_ONE)
        acc[at + 2, u, k] = lo - c * FIXED_ONE
        lo = acc[at + 1, u, k] + np.int64(d1) + c
        c = np.int64(lo >= FIXED_ONE)
        acc[at + 1, u, k] = lo - c * FIXED_ONE
        acc[at + 0, u, k] += c
        return
    if not (e2 >= 0.0 and e2 <= 1.0):
        acc[at + 4, u, k] += 1
        return
    # Step 1: the three 62-bit digits of e2 below the point (each step is exact: a scaling by a
    # power of two, or a double minus its floor)
    x = e2 * FIXED_SCALE
    d1 = np.floor(x)
    x = (x - d1) * FIXED_SCALE
    d2 = np.floor(x)
    x = (x - d2) * FIXED_SCALE
    d3 = np.rint(x)  # x is already an integer when e2 >= 2**-134 or e2 is a multiple of 2**-186
    # Step 2: add them, last digit first, carrying (a digit < 2**62, an addend <= 2**62, a carry
    # <= 1: below 2**63)
    c = 0
    for j in range(FIXED_DIGITS, 0, -1):
        add = d3 if j == 3 else (d2 if j == 2 else d1)
        lo = acc[at + j, u, k] + np.int64(add) + c
        c = 0
        if lo >= FIXED_ONE:
            lo -= FIXED_ONE
            c = 1
        acc[at + j, u, k] = lo
    acc[at + 0, u, k] += c


@njit(**NJIT_OPTIONS)
def fixed_merge(acc, other):
    """Add the fixed-point sums ``other`` into ``acc`` (the same shape), exactly.

    Parameters
    ----------
    acc : ndarray (FIXED_DIGITS + 2, n_order + 1, max_k + 1) int64
        The fixed-point sums (the module docstring), added to.
    other : ndarray int64, the shape of ``acc``
        The sums added; read only.
    """
    for u in range(acc.shape[1]):
        for k in range(acc.shape[2]):
            _fixed_add_digits(acc[:, u, k], other[:, u, k])


@njit(**NJIT_OPTIONS)
def kdb_parents(order, cmi, k):
    """kDB's parents of every attribute of ``order``: position ``u`` takes the ``min(u, k)`` earlier
    attributes with the highest CMI with it, in decreasing CMI, ties by attribute index (what a stable
    sort of the index-sorted candidates by decreasing CMI gives, cut to ``k``).

    Parameters
    ----------
    order : ndarray (n_order,) int64
        The attributes in the order they join the model.
    cmi : ndarray (n_attributes, n_attributes) float64
        CMI(X_i; X_j | Y).
    k : int
        The most parents.

    Returns
    -------
    ndarray (n_order, k) int64
        Row ``u``: the parents of ``order[u]`` in branching order, -1 after the last.
    """
    n = order.shape[0]
    out = np.full((n, max(k, 1)), -1, dtype=np.int64)
    for u in range(1, n):
        child = order[u]
        size = 0
        for i in range(u):  # insertion into the best min(u, k) so far
            j = order[i]
            w = cmi[child, j]
            pos = size
            while pos > 0:
                q = out[u, pos - 1]
                wq = cmi[child, q]
                if w > wq or (w == wq and j < q):
                    pos -= 1
                else:
                    break
            if pos >= k:
                continue
            last = min(size, k - 1)
            for s in range(last, pos, -1):
                out[u, s] = out[u, s - 1]
            out[u, pos] = j
            if size < k:
                size += 1
    return out
