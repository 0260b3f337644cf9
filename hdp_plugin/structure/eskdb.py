"""The structure of one ESKDB member: an SkDB on a sampled attribute order.

ESKDB (Zhang, Petitjean and Buntine 2020) averages SkDB classifiers that differ by their attribute
order (and, on numeric data, by their stochastic discretisation). Member 0 is anchored on the
plain order of decreasing MI with the class; every other member draws its order by sampling the
attributes without replacement with probability proportional to their MI (a Plackett-Luce draw,
done here with Gumbel keys: sorting ``log MI + Gumbel noise`` in decreasing order gives exactly
that distribution). Attributes with zero MI are left out of every order. Parents and the (n*, k*)
selection then follow kDB and SkDB on that order (:func:`~hdp_plugin.structure.selective.selective_kdb`;
the fit's pipeline, :mod:`hdp_plugin.model.pipeline`, runs the steps for all members).

References
----------
.. [1] H. Zhang, F. Petitjean and W. Buntine, "Bayesian network classifiers using ensembles and
   smoothing", Knowledge and Information Systems 62 (2020) 3457-3480.
"""

from __future__ import annotations

import numpy as np

from .base import Structure
from .counts import mutual_information
from .learners import mi_order


def sampled_order(mi: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """The attributes with MI > 0, in decreasing MI (``rng`` None) or in a Plackett-Luce draw.

    Parameters
    ----------
    mi : ndarray of shape (n_attributes,)
        MI of every attribute with the class.
    rng : numpy.random.Generator or None
        The member's order stream; None for the MI order itself (ties by index).

    Returns
    -------
    ndarray of int64
        Attribute indices; empty when no attribute has positive MI.
    """
    mi = np.asarray(mi, dtype=np.float64)
    informative = np.flatnonzero(mi > 0.0)
    if rng is None:
        order = mi_order(mi)
        return order[mi[order] > 0.0].astype(np.int64)
    keys = np.log(mi[informative]) + rng.gumbel(size=informative.size)
    return informative[np.argsort(-keys, kind="stable")].astype(np.int64)


def member_order(stats, order_rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray]:
    """``(mi, order)``: the MI of every attribute with the class, from the member's counts, and the
    member's attribute order (:func:`sampled_order`; empty when no attribute is informative)."""
    mi = mutual_information(stats)
    return mi, sampled_order(mi, order_rng)


def prior_structure(stats, mi: np.ndarray, k: int, m: float) -> Structure:
    """The structure of a member whose order is empty: no attribute kept, the class prior alone."""
    return Structure(kind="skdb", k=0, parents=((),) * stats.n_attributes, kept=(), order=(), mi=mi,
                     info={"n_star": 0, "k_star": 0, "max_k": int(k), "m": float(m)})
