"""numpy's SeedSequence words of many children at once, as a numba kernel (for
:func:`hdp_plugin.seeds.spawned_states`).

numpy's algorithm works on 32-bit words; here they are held in uint64 and every product and
difference is masked to its low 32 bits, which is exact (two 32-bit factors fit in 64 bits, and a
difference taken mod 2**64 has the same low 32 bits as mod 2**32). The constants are numpy's
(numpy/random/bit_generator.pyx, after M. E. O'Neill's seed_seq).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.jit import NJIT_OPTIONS

_M = np.uint64(0xFFFFFFFF)
_S16 = np.uint64(16)
_INIT_A, _MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)
_INIT_B, _MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
_MIX_L, _MIX_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)


@njit(inline="always", **NJIT_OPTIONS)
def _hashmix(value, h):
    """numpy's hashmix: ``(mixed value, next hash constant)``.

    Parameters
    ----------
    value : uint64
        A 32-bit word.
    h : uint64
        The hash constant (32 bits).
    """
    h2 = (h * _MULT_A) & _M
    v = ((value ^ h) * h2) & _M
    return v ^ (v >> _S16), h2


@njit(inline="always", **NJIT_OPTIONS)
def _mix(x, y):
    """numpy's mix of two 32-bit words.

    Parameters
    ----------
    x, y : uint64
        The words.
    """
    r = (_MIX_L * x - _MIX_R * y) & _M
    return r ^ (r >> _S16)


@njit(inline="always", **NJIT_OPTIONS)
def _mix_in(pool, word, h):
    """Mix one more entropy word into every word of ``pool`` (in place); returns the hash constant.

    Parameters
    ----------
    pool : ndarray (4,) uint64
        The pool.
    word : uint64
        The entropy word.
    h : uint64
        The hash constant.
    """
    for i in range(4):
        v, h = _hashmix(word, h)
        pool[i] = _mix(pool[i], v)
    return h


@njit(**NJIT_OPTIONS)
def children_words(head, indices, n_words):
    """Every child's ``generate_state(n_words, np.uint64)``: the children of a SeedSequence whose entropy
    words (the run entropy padded to 4 words, then the spawn key's) are ``head``, each child's index
    appended. What the siblings share (the pool mixed from ``head``) is mixed once.

    Parameters
    ----------
    head : ndarray (n_head,) uint64
        The parent's entropy as 32-bit words, at least 4.
    indices : ndarray (n_children,) int64
        The children's indices (their last entropy word), each below 2**32.
    n_words : int
        The 64-bit words of each child's state.

    Returns
    -------
    ndarray (n_children, n_words) uint64
    """
    pool = np.empty(4, dtype=np.uint64)
    h = _INIT_A
    for i in range(4):
        pool[i], h = _hashmix(head[i], h)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                v, h = _hashmix(pool[src], h)
                pool[dst] = _mix(pool[dst], v)
    for j in range(4, head.shape[0]):
        h = _mix_in(pool, head[j], h)
    out = np.empty((indices.shape[0], n_words), dtype=np.uint64)
    p = np.empty(4, dtype=np.uint64)
    for c in range(indices.shape[0]):
        for i in range(4):
            p[i] = pool[i]
        _mix_in(p, np.uint64(indices[c]), h)  # the child's index, its last entropy word
        hb = _INIT_B
        prev = np.uint64(0)
        for j in range(2 * n_words):  # 2 n_words 32-bit words drawn round the pool, paired little-endian
            d = p[j % 4] ^ hb
            hb = (hb * _MULT_B) & _M
            d = (d * hb) & _M
            d ^= d >> _S16
            if j % 2:
                out[c, j // 2] = prev | (d << np.uint64(32))
            else:
                prev = d
    return out
