"""Independent random streams for every purpose, all derived from one ``random_state``.

A model's seed is a :class:`numpy.random.SeedSequence`; its random streams are children keyed by
purpose, so each one depends only on the seed and its key, never on the order in which work
runs or on the number of threads:

* ``(t,)`` for ``t < 2**30``: the sampler's stream of context tree ``t``;
* ``(DISCRETIZE, j)``: the stochastic discretiser of attribute ``j``;
* ``(ORDER,)``: an ESKDB member's attribute order;
* ``(MEMBER, e)``: ESKDB member ``e``'s own seed, under which the same keys apply again.
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
    """The stream of ``seed`` keyed by ``key`` (see the module docstring)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + tuple(int(k) for k in key))


def generator(seed: np.random.SeedSequence, *key: int) -> np.random.Generator:
    """A numpy Generator on the stream ``child(seed, *key)``."""
    return np.random.default_rng(child(seed, *key))


_MASK32 = 0xFFFFFFFF


def _words32(n: int) -> list[int]:
    """A whole number >= 0 as SeedSequence reads it: little-endian 32-bit words, 0 as one word."""
    out = [n & _MASK32]
    n >>= 32
    while n:
        out.append(n & _MASK32)
        n >>= 32
    return out


def spawned_states(seed: np.random.SeedSequence, n: int, n_words: int = 4, indices=None) -> np.ndarray:
    """``[c.generate_state(n_words, np.uint64) for c in seed.spawn(n)]`` as one (n, n_words) uint64
    array, without spawning: ``seed`` is read, not advanced. With ``indices`` (a sequence of whole
    numbers), only the children of those indices among the ``n``, in that order.

    numpy's SeedSequence algorithm in a numba kernel (:mod:`hdp_plugin.seeds.kernels`), with what the
    children share done once: a child's entropy is its parent's with its index appended, so the pool
    mixed from everything before the index is the same for all of them, and each child only mixes in
    its index and draws its words. Seeds outside that form (entropy not a whole number, a pool size
    other than 4) take numpy's own path; either way the words are numpy's (tests compare them for
    many seeds).
    """
    entropy, key = seed.entropy, tuple(seed.spawn_key)
    start = seed.n_children_spawned
    which = list(range(n)) if indices is None else [int(i) for i in indices]
    if any(not 0 <= i < n for i in which):
        raise ValueError(f"child indices must be in [0, {n}), got {which}")
    if not (isinstance(entropy, (int, np.integer)) and entropy >= 0 and seed.pool_size == 4
            and all(isinstance(k, (int, np.integer)) and k >= 0 for k in key) and start + n <= _MASK32 + 1):
        kids = [np.random.SeedSequence(entropy, spawn_key=key + (start + i,), pool_size=seed.pool_size)
                for i in which]
        return np.array([c.generate_state(n_words, np.uint64) for c in kids],
                        dtype=np.uint64).reshape(len(which), n_words)
    run = _words32(int(entropy))
    run += [0] * (4 - len(run))  # a spawn key follows: the run entropy is padded to the pool size
    head = run + [w for k in key for w in _words32(int(k))]
    from .kernels import children_words

    return children_words(np.asarray(head, np.uint64), np.asarray([start + i for i in which], np.int64), int(n_words))


def describe(seed: np.random.SeedSequence) -> dict:
    """The seed as plain JSON data: ``{"entropy": int, "spawn_key": [int, ...]}``."""
    return {"entropy": int(seed.entropy), "spawn_key": [int(k) for k in seed.spawn_key]}
