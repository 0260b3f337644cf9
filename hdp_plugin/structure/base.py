"""The plain structure object handed from structure learning to parameter estimation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Structure:
    """A Bayesian network classifier structure over attribute indices.

    The class is the parent of every kept attribute and is not listed.

    Attributes
    ----------
    kind : str
        ``"nb"``, ``"tan"``, ``"kdb"`` or ``"skdb"``.
    k : int
        The maximum number of attribute parents the learner allowed (0 for NB, 1 for TAN, the
        chosen k* for SkDB).
    parents : tuple of tuple of int
        For every attribute index ``j`` (kept or not), its attribute parents in **branching
        order**: decreasing CMI(X_j; parent | Y), ties by attribute index. Dropped attributes have
        ``()``.
    kept : tuple of int
        Indices of the attributes the model uses, ascending. NB, TAN and kDB keep all of them;
        SkDB keeps its selected prefix of the MI order.
    order : tuple of int
        The attributes in decreasing MI with the class (ties by index), all of them.
    mi : ndarray of shape (n_attributes,)
        MI(X_j; Y) in nats, from raw frequencies.
    """

    kind: str
    k: int
    parents: tuple[tuple[int, ...], ...]
    kept: tuple[int, ...]
    order: tuple[int, ...] = ()
    mi: np.ndarray = field(default_factory=lambda: np.zeros(0), compare=False)
    #: free-form figures from the learner (for SkDB: the selection's RMSE grid and chosen n*, k*)
    info: dict = field(default_factory=dict, compare=False)

    @property
    def n_attributes(self) -> int:
        return len(self.parents)

    def named_parents(self, names: list[str]) -> dict[str, list[str]]:
        """``{attribute name: [parent names in branching order]}`` for the kept attributes."""
        return {names[j]: [names[p] for p in self.parents[j]] for j in self.kept}
