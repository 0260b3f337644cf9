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


def describe(seed: np.random.SeedSequence) -> dict:
    """The seed as plain JSON data: ``{"entropy": int, "spawn_key": [int, ...]}``."""
    return {"entropy": int(seed.entropy), "spawn_key": [int(k) for k in seed.spawn_key]}
