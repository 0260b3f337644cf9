"""A small, explicit random number generator for numba kernels.

Each context tree owns one xoshiro256** state (four uint64 words): stream ``t`` of the model's (or
member's) seed (:func:`hdp_plugin.seeds.stream_states`). Kernels take the state array and advance
it in place, so a tree's random stream depends only on the seed and the tree's index, never on the
number of threads or on which thread ran the tree. The generator itself is
:mod:`hdp_plugin.seeds.xoshiro`; this module adds the variates the sampler draws.

References
----------
G. Marsaglia and W. W. Tsang, "A simple method for generating gamma variables", ACM TOMS 26 (2000).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..seeds import as_seed_sequence, stream_states
from ..seeds.xoshiro import uniform
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
        Number of streams (one per context tree): row ``i`` is the seed's stream ``i``
        (:func:`hdp_plugin.seeds.stream_states`); a SeedSequence given is read, not advanced.

    Returns
    -------
    ndarray of shape (n_streams, 4), uint64
    """
    if isinstance(random_state, np.ndarray):
        if random_state.shape != (n_streams, 4) or random_state.dtype != np.uint64:
            raise ValueError(f"generator states must be a ({n_streams}, 4) uint64 array, got "
                             f"{random_state.shape} {random_state.dtype}")
        return random_state.copy()
    return stream_states(as_seed_sequence(random_state), np.arange(max(n_streams, 0)))


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
