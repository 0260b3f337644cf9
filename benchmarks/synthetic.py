"""Seeded synthetic categorical data drawn from a known network.

20 attributes with 2 to 5 values and 3 classes by default; attribute i depends on the class and on
attributes i-1 and i-2 through conditional tables drawn from a Dirichlet(0.5) distribution.
"""

from __future__ import annotations

import numpy as np

from hdp_plugin.data import Attribute, Dataset


def synthetic(n_rows: int, n_attributes: int = 20, n_classes: int = 3, seed: int = 0,
              rows_seed: int | None = None) -> Dataset:
    """A Dataset of ``n_rows`` rows sampled from the planted network (vectorised, seconds for 1M rows).

    ``seed`` draws the network and, by default, the rows; with ``rows_seed`` the network still comes
    from ``seed`` and the rows from ``rows_seed`` (partitions of one large data set from one network).
    """
    if rows_seed is not None:
        return _synthetic_rows(n_rows, n_attributes, n_classes, seed, rows_seed)
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 6, n_attributes)
    y = rng.choice(n_classes, size=n_rows, p=rng.dirichlet(np.full(n_classes, 2.0)))
    return _sample(rng, rng, cards, y, n_classes, f"<synthetic {n_rows} rows>")


def _synthetic_rows(n_rows, n_attributes, n_classes, seed, rows_seed) -> Dataset:
    net = np.random.default_rng(seed)
    rng = np.random.default_rng([seed, rows_seed])
    cards = net.integers(2, 6, n_attributes)
    prior = net.dirichlet(np.full(n_classes, 2.0))
    y = rng.choice(n_classes, size=n_rows, p=prior)
    return _sample(net, rng, cards, y, n_classes, f"<synthetic {n_rows} rows, part {rows_seed}>")


def _sample(net, rng, cards, y, n_classes, source) -> Dataset:
    """The attributes' columns given the classes ``y``: tables drawn from ``net``, values from ``rng``
    (one generator for both draws them interleaved, attribute by attribute)."""
    n_rows = y.shape[0]
    X = np.zeros((n_rows, cards.shape[0]), np.uint8)
    for i in range(cards.shape[0]):
        p1 = X[:, i - 1].astype(np.int64) if i >= 1 else np.zeros(n_rows, np.int64)
        p2 = X[:, i - 2].astype(np.int64) if i >= 2 else np.zeros(n_rows, np.int64)
        r1 = cards[i - 1] if i >= 1 else 1
        r2 = cards[i - 2] if i >= 2 else 1
        tables = net.dirichlet(np.full(cards[i], 0.5), size=n_classes * r1 * r2)
        ctx = (y * r1 + p1) * r2 + p2
        cum = np.cumsum(tables, axis=1)[ctx]
        u = rng.random(n_rows)[:, None]
        X[:, i] = np.minimum((u > cum).sum(axis=1), cards[i] - 1)
    attributes = [Attribute(f"a{i}", tuple(f"v{v}" for v in range(cards[i]))) for i in range(cards.shape[0])]
    cls = Attribute("class", tuple(f"c{c}" for c in range(n_classes)))
    return Dataset(attributes, cls, X, y.astype(np.int32), relation=f"synthetic-{n_rows}", source=source)
