"""xoshiro256**, the package's random number generator, as numba kernels over a state of four uint64 words.

Every stream (a context tree's, a column's cut points') is one such state (:func:`hdp_plugin.seeds.stream_states`),
advanced in place, so a stream's numbers depend only on its seed and its number, never on the threads.

References
----------
D. Blackman and S. Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 47 (2021).
"""

from __future__ import annotations

from numba import njit, uint64

from ..runtime.jit import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def _rotl(x, k):
    """``x`` rotated left by ``k`` bits.

    Parameters
    ----------
    x : uint64
        The word.
    k : int
        The bits to rotate by, 0 < k < 64.
    """
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(**NJIT_OPTIONS)
def xoshiro_step(s0, s1, s2, s3):
    """One xoshiro256** step on a state held in four scalars: ``(output, s0, s1, s2, s3)``.

    Hot kernels keep a tree's state in locals for a whole sweep and call this: a call that passes
    the state array costs two atomic reference-count updates, more than the step itself.

    Parameters
    ----------
    s0, s1, s2, s3 : uint64
        The state's four words.
    """
    result = _rotl(s1 * uint64(5), 7) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit(**NJIT_OPTIONS)
def unit_double(x):
    """The top 53 bits of a 64-bit output as a double uniform on [0, 1).

    Parameters
    ----------
    x : uint64
        An output of :func:`xoshiro_step`.
    """
    return float(x >> uint64(11)) * (1.0 / 9007199254740992.0)


@njit(**NJIT_OPTIONS)
def next_u64(s):
    """Advance state ``s`` and return the next 64-bit output (xoshiro256**).

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`hdp_plugin.seeds.stream_states`), advanced in place.
    """
    result, s[0], s[1], s[2], s[3] = xoshiro_step(s[0], s[1], s[2], s[3])
    return result


@njit(**NJIT_OPTIONS)
def uniform(s):
    """A double uniform on [0, 1) with 53 random bits.

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`hdp_plugin.seeds.stream_states`), advanced in place.
    """
    return unit_double(next_u64(s))

