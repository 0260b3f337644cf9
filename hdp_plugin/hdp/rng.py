"""A small, explicit random number generator for numba kernels.

Each context tree owns one xoshiro256** state (four uint64 words) derived from the model's
``random_state`` with :class:`numpy.random.SeedSequence`. Kernels take the state array and advance
it in place, so a tree's random stream depends only on the seed and the tree's index, never on the
number of threads or on which thread ran the tree.

References
----------
D. Blackman and S. Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 47 (2021).
G. Marsaglia and W. W. Tsang, "A simple method for generating gamma variables", ACM TOMS 26 (2000).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from ..seeds import spawned_states
from ..runtime.jit import NJIT_OPTIONS


def tree_states(random_state, n_streams: int) -> np.ndarray:
    """Independent generator states, one row of four uint64 words per stream.

    Parameters
    ----------
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence, ndarray or None
        The model's seed. ``None`` draws fresh entropy. An array of shape (n_streams, 4) of
        uint64 holds the states themselves (an ensemble derives each member's trees' states
        from the member's own seed) and is copied.
    n_streams : int
        Number of streams (one per context tree): stream ``i`` is what the seed's child ``i``
        would give (counted from the children it has already spawned); a SeedSequence given is
        read, not advanced.

    Returns
    -------
    ndarray of shape (n_streams, 4), uint64
    """
    if isinstance(random_state, np.ndarray):
        if random_state.shape != (n_streams, 4) or random_state.dtype != np.uint64:
            raise ValueError(f"generator states must be a ({n_streams}, 4) uint64 array, got "
                             f"{random_state.shape} {random_state.dtype}")
        return random_state.copy()
    if isinstance(random_state, np.random.SeedSequence):
        ss = random_state
    elif isinstance(random_state, np.random.Generator):
        ss = np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    elif random_state is None:
        ss = np.random.SeedSequence()
    else:
        ss = np.random.SeedSequence(int(random_state))
    # stream i is child i of the seed (numpy's words, computed without spawning: a SeedSequence
    # given is read, not advanced, so the same seed gives the same states every time)
    states = spawned_states(ss, max(n_streams, 0))
    states[~states.any(axis=1), 0] = 1  # the all-zero state is the one xoshiro cannot leave
    return states


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
        A generator state (a row of :func:`tree_states`), advanced in place.
    """
    result, s[0], s[1], s[2], s[3] = xoshiro_step(s[0], s[1], s[2], s[3])
    return result


@njit(**NJIT_OPTIONS)
def uniform(s):
    """A double uniform on [0, 1) with 53 random bits.

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`tree_states`), advanced in place.
    """
    return unit_double(next_u64(s))


@njit(**NJIT_OPTIONS)
def uniform_open(s):
    """A double uniform on (0, 1).

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`tree_states`), advanced in place.
    """
    u = uniform(s)
    while u == 0.0:
        u = uniform(s)
    return u


@njit(**NJIT_OPTIONS)
def normal(s):
    """A standard normal variate (Marsaglia's polar method; the spare value is discarded).

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`tree_states`), advanced in place.
    """
    while True:
        u = 2.0 * uniform(s) - 1.0
        v = 2.0 * uniform(s) - 1.0
        r = u * u + v * v
        if 0.0 < r < 1.0:
            return u * math.sqrt(-2.0 * math.log(r) / r)


@njit(**NJIT_OPTIONS)
def gamma(s, shape):
    """A Gamma(shape, scale 1) variate (Marsaglia and Tsang, boosted below 1).

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`tree_states`), advanced in place.
    shape : float
        The shape, > 0.
    """
    if shape < 1.0:
        g = gamma(s, shape + 1.0)
        return g * math.exp(math.log(uniform_open(s)) / shape)
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = normal(s)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform_open(s)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            return d * v
        if math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v


@njit(**NJIT_OPTIONS)
def neg_log_beta(s, a, b):
    """``-log q`` for ``q ~ Beta(a, b)``, computed stably from two gamma variates.

    Parameters
    ----------
    s : ndarray (4,) uint64
        A generator state (a row of :func:`tree_states`), advanced in place.
    a, b : float
        The Beta distribution's parameters, > 0.
    """
    ga = gamma(s, a)
    gb = gamma(s, b)
    if ga <= 0.0:
        # underflow of a tiny-shape gamma: q is 0 to double precision; use the limit of -log q
        return 745.0
    return math.log(ga + gb) - math.log(ga)
