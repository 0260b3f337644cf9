"""ESKDB: an ensemble of selective kDB members with HDP tables, averaged in probability.

Each member (Zhang, Petitjean and Buntine 2020) is a complete SkDB classifier built from its own
random stream on the training data:

1. discretise every numeric attribute (stochastic MDL by default: each member cuts differently);
2. count, and draw the member's attribute order (member 0: decreasing MI; the others: sampled in
   proportion to MI), dropping attributes with zero MI;
3. kDB parents and SkDB's (n*, k*) selection on that order;
4. one context tree per selected attribute, its tables estimated by the HDP sampler (or a
   baseline estimator).

The ensemble predicts the arithmetic mean of its members' normalised class probabilities.

Reproducibility and parallelism: member ``e`` draws everything from its own seed, the stream
``(MEMBER, e)`` of ``random_state`` (:mod:`hdp_plugin.seeds`), split further by purpose, so the
ensemble is the same bit for bit whatever the number of threads. The members are fitted by the
pipeline of every model (:mod:`hdp_plugin.model.pipeline`): in memory on threads (the counting and
selection kernels release the GIL), and then the trees of **all** members are sampled in one run: one
set of Stirling tables, one pool of threads taking the largest trees first, a tree that poses the
same problem as another member's (nominal data: the same attribute and parents) sampled once and copied
(:func:`hdp_plugin.hdp.trees.tree_sources`). Nothing is written to disk.

This module holds what a model's network is (:class:`Member`: every model is a weighted list of
them, one for a single network) and how a model predicts.

References
----------
.. [1] H. Zhang, F. Petitjean and W. Buntine, "Bayesian network classifiers using ensembles and
   smoothing", Knowledge and Information Systems 62 (2020) 3457-3480.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..data import Attribute
from ..hdp.tables import ProbabilityTables, predict_log_proba
from ..structure import Structure

log = logging.getLogger(__name__)


@dataclass
class Member:
    """One network of a model: its seed, attributes (with its own cut points), structure, tables and weight."""

    seed: dict  # the member's seed as plain data (seeds.describe)
    attributes: list[Attribute]
    cardinalities: np.ndarray
    structure: Structure
    tables: ProbabilityTables
    weight: float
    #: HDP only: every node's concentration group (numbered within the member) and the groups'
    #: final concentrations
    node_group: np.ndarray | None = None
    concentrations: np.ndarray | None = None
    #: HDP only: per tree, per depth below the root, the concentrations' [smallest, largest] (what a
    #: model file keeps of them)
    concentration_ranges: list | None = None


def model_proba(clf, codes: list[np.ndarray], *, log: bool = False) -> np.ndarray:
    """P(class | x) (or its log) of the rows coded as ``codes`` (:func:`coding_attributes` order): the
    weighted mean of the members' normalised class probabilities, members added in order and the sum
    divided by the total weight, as the Java classifier does. A model of one network returns its
    log-probabilities as computed, so that they stay exact where a probability would underflow."""
    members = clf.members_
    if len(members) == 1:
        lp = predict_log_proba(members[0].tables, codes[0])
        return lp if log else np.exp(lp)
    total = None
    for mb, X in zip(members, codes):
        p = np.exp(predict_log_proba(mb.tables, X)) * mb.weight
        total = p if total is None else total + p
    proba = total / sum(mb.weight for mb in members)
    if not log:
        return proba
    with np.errstate(divide="ignore"):
        return np.log(proba)


def coding_attributes(clf) -> list[list[Attribute]]:
    """The attributes each network of ``clf`` codes data with (one list per member, its own cut points)."""
    return [mb.attributes for mb in clf.members_]


def used_attributes(clf) -> list[str]:
    """The names of the attributes some network of ``clf`` uses (keeps in its structure), in order."""
    kept = {mb.attributes[j].name for mb in clf.members_ for j in mb.structure.kept}
    return [a.name for a in clf.attributes_ if a.name in kept]


def member_trees(member: Member, dataset):
    """The dense context trees a fit built for ``member`` from its training ``dataset`` (a
    :class:`~hdp_plugin.data.Dataset`): its rows coded with the member's cut points, the trees of its
    structure, every cell of every node (a fitted model keeps only its sparse tables). For tools that
    study the sampler (the benchmarks) and for tests."""
    from ..hdp.trees import build_trees
    from ..preprocess import apply_cut_points

    ds, _ = dataset.drop_missing_class()
    X = apply_cut_points(ds, member.attributes).X
    st = member.structure
    return build_trees(X, ds.y, member.cardinalities, member.tables.n_classes, st.parents, st.kept)
