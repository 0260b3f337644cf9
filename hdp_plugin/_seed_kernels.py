"""The per-child part of :func:`hdp_plugin._seeds.spawned_states` as a numba kernel.

numpy's SeedSequence works on 32-bit words; here they are held in uint64 and every product and
difference is masked to its low 32 bits, which is exact (two 32-bit factors fit in 64 bits, and a
difference taken mod 2**64 has the same low 32 bits as mod 2**32).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .config import NJIT_OPTIONS

_M = np.uint64(0xFFFFFFFF)
_S16 = np.uint64(16)
_MULT_A = np.uint64(0x931E8875)
_INIT_B, _MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
_MIX_L, _MIX_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)


@njit(**NJIT_OPTIONS)
def children_words(pool, h, indices, n_words):
    """Every child's ``generate_state(n_words, np.uint64)`` from the pool its siblings share.

    Parameters
    ----------
    pool : ndarray (4,) uint64
        The parent's pool mixed from every entropy word before the child's index (32-bit values).
    h : int
        The hash constant after that mixing.
    indices : ndarray (n_children,) int64
        The children's indices (their last entropy word), each below 2**32.
    n_words : int
        The 64-bit words of each child's state.

    Returns
    -------
    ndarray (n_children, n_words) uint64
    """
    out = np.empty((indices.shape[0], n_words), dtype=np.uint64)
    p = np.empty(4, dtype=np.uint64)
    for c in range(indices.shape[0]):
        word = np.uint64(indices[c])
        hh = np.uint64(h)
        for i in range(4):  # the index mixed into every pool word (numpy's hashmix, then mix)
            hn = (hh * _MULT_A) & _M
            v = ((word ^ hh) * hn) & _M
            v ^= v >> _S16
            hh = hn
            r = (_MIX_L * pool[i] - _MIX_R * v) & _M
            p[i] = r ^ (r >> _S16)
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
