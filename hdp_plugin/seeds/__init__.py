"""Independent random streams for every purpose, all derived from one ``random_state``.

A model's seed is a :class:`numpy.random.SeedSequence` (numpy turns an integer, or fresh entropy, into
one); its random streams are numbered, so each depends only on the seed and its number, never on the
order in which work runs or on the number of threads:

* stream ``t`` for ``t < 2**30`` (:func:`stream_states`): the sampler's stream of context tree ``t``;
* stream ``DISCRETIZE + j``: the stochastic discretiser of attribute ``j``;
* ``child(seed, ORDER)``: an ESKDB member's attribute order (a numpy Generator);
* ``child(seed, MEMBER, e)``: ESKDB member ``e``'s own seed, whose streams are numbered again.

A numbered stream is a xoshiro256** state (:mod:`hdp_plugin.seeds.xoshiro`) made from the seed's four
64-bit words ``w = seed.generate_state(4, uint64)`` by splitmix64: word ``k`` of stream ``i`` is
``mix64(w[k] + (4 i + k + 1) * 0x9E3779B97F4A7C15)`` (mod 2**64), ``mix64`` splitmix64's output
function. For each ``k`` this is a bijection of ``i``, so two streams of one seed never share a state.
"""

from __future__ import annotations

import numpy as np

DISCRETIZE = 1 << 30
ORDER = DISCRETIZE + 1
MEMBER = DISCRETIZE + 2


def as_seed_sequence(random_state) -> np.random.SeedSequence:
    """The seed of ``random_state`` (int, SeedSequence, Generator or None for fresh entropy).

    A SeedSequence given by the caller is copied, never spawned from, so using it twice gives
    the same streams.
    """
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.SeedSequence(random_state.entropy, spawn_key=random_state.spawn_key)
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    if random_state is None:
        return np.random.SeedSequence()
    return np.random.SeedSequence(int(random_state))


def child(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The seed ``key`` below ``seed`` (see the module docstring)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + tuple(int(k) for k in key))


def generator(seed: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """A numpy Generator on the seed ``child(seed, *key)``."""
    return np.random.default_rng(child(seed, *key))


_GAMMA = np.uint64(0x9E3779B97F4A7C15)


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function of every word of ``z`` (uint64, wrapping): a bijective 64-bit mix."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def stream_states(seed: np.random.SeedSequence, indices) -> np.ndarray:
    """The xoshiro256** states of the streams ``indices`` (whole numbers >= 0) of ``seed``, one row of
    four uint64 words each (the module docstring gives the derivation); ``seed`` is read, not advanced."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    if idx.size and int(idx.min()) < 0:
        raise ValueError(f"stream numbers must be >= 0, got {int(idx.min())}")
    words = seed.generate_state(4, np.uint64)
    counter = idx.astype(np.uint64)[:, None] * np.uint64(4) + np.arange(1, 5, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        states = mix64(words[None, :] + counter * _GAMMA)
    states[~states.any(axis=1), 0] = 1  # the all-zero state is the one xoshiro cannot leave
    return np.ascontiguousarray(states)


def describe(seed: np.random.SeedSequence) -> dict:
    """The seed as plain JSON data: ``{"entropy": int, "spawn_key": [int, ...]}``."""
    return {"entropy": int(seed.entropy), "spawn_key": [int(k) for k in seed.spawn_key]}
