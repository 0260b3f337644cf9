"""Numba kernels of SkDB's context tries: counting them from the rows, merging, canonical layout. Pure
functions over flat arrays.

Nothing here logs or raises: the driver in :mod:`hdp_plugin.structure.selective` checks shapes,
allocates and raises. The only allocation inside a kernel is the tries' growth by doubling, always made
outside the loops that write them (before a row, a merge, a run of rows, for the most those can add): an
array variable reassigned inside a loop keeps LLVM from holding its data pointer and length in registers
through that loop. Every kernel has a slow twin in the tests.

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
classes would be most of the memory and of the time of building the tries. A child slot or value slot
holds the block's offset itself, so descending one level or reading a value's counts is one load;
the C classes of one value are adjacent, so the leave-one-out pass reads a context's estimates for
the row's value from one or two cache lines.
``sizes`` holds ``[n_nodes, cells used]``. The layout depends on the order in which contexts are
first seen (which the passes do not care about: they read counts); :func:`trie_canonical` re-lays a
trie out in a canonical order (the roots' node blocks
first, then attribute by attribute every node depth first, children by ascending value, each node's
block followed by its value blocks by ascending value), so tries with the same counts are the same
array however their rows were split and merged (:func:`trie_merge`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.jit import NJIT_OPTIONS

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
    # string formatting, a large part of the first use's compilation for this helper alone
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
        # registers, and those loops then run several times slower
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
