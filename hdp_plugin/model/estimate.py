"""The estimation step of every fit: the tables of one network's context trees, or of several
networks' (an ensemble's members) in one run, by the HDP sampler or a baseline estimator.

One function for the in-memory single network, the in-memory ensemble and the streamed fits, so
the estimator dispatch (``hdp``, ``laplace``, ``m-estimate``, ``mle``) exists once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..hdp.tables import laplace, m_estimate
from ..hdp.trees import ContextTrees, concatenate_trees, nodes_from, tree_sources, without_nodes


@dataclass
class Estimates:
    """What :func:`estimate_tables` returns, network by network.

    Attributes
    ----------
    log_probs : list
        A baseline estimator's: ``log_probs[e]``, the log-probabilities of network ``e``'s cells
        (``-inf`` for a zero); None for the HDP sampler.
    cells : list
        The HDP sampler's: ``cells[e]``, ``(SamplerCells, probabilities)`` of network ``e``'s cells
        (its nodes' observed values and rest cells, :class:`~hdp_plugin.hdp.sampler.SamplerCells`);
        None for a baseline estimator.
    node_group, concentrations : list
        ``node_group[e]`` (per node of network ``e``, numbered from 0 within it) and
        ``concentrations[e]`` (per group) of the HDP sampler; None for a baseline estimator.
    info : dict
        The sampler's figures for ``fit_info_`` (iterations, burn-in, seconds, the stopping rule's
        record); empty for a baseline estimator.
    """

    log_probs: list | None
    node_group: list
    concentrations: list
    info: dict
    cells: list | None = None

    def tables(self, e: int, trees: ContextTrees, log_prior: np.ndarray, *, backoff_to_parent: bool):
        """Network ``e``'s :class:`~hdp_plugin.hdp.tables.ProbabilityTables` (of its ``trees``)."""
        from ..hdp.tables import ProbabilityTables

        if self.cells is not None:
            cells, probs = self.cells[e]
            return ProbabilityTables.from_sampler(trees, cells, probs, log_prior)
        return ProbabilityTables.from_dense(trees, self.log_probs[e], log_prior, backoff_to_parent=backoff_to_parent)


def estimate_tables(trees: list[ContextTrees], *, estimator: str, m: float, sample, random_state, iterations: int,
                    burn_in: int | None, tying: str, tolerance: float | None, n_jobs: int | None,
                    progress=None, first_check: int | None = None, cells: list | None = None) -> Estimates:
    """Estimate the tables of every network in ``trees``.

    Parameters
    ----------
    trees : list of ContextTrees
        One network's trees, or every member's (sampled together: one set of Stirling tables, one
        thread pool).
    estimator : {"hdp", "laplace", "m-estimate", "mle"}
        ``mle`` is the m-estimate with ``m = 0`` (maximum likelihood with back-off).
    m : float
        The m of the m-estimate.
    sample : callable
        The engine's sampler (:func:`hdp_plugin.hdp.sampler.sample`'s signature).
    random_state
        What the sampler's ``random_state`` takes: one network's seed, or the stacked tree generator
        states of every member's trees (:func:`hdp_plugin.hdp.rng.tree_states`), in tree order.
    iterations, burn_in, tying, tolerance, first_check, n_jobs, progress
        The sampler's settings (HDP only).
    cells : list of SamplerCells, optional
        Every network's sampler cells (:func:`~hdp_plugin.hdp.sampler.sampler_cells`) when the caller
        made them (HDP only): the trees' dense counts are then not read, and may be empty. The list is
        emptied as its cells are laid out one after the other (the parts are not kept twice).

    With HDP and several networks, ``trees`` lends its networks' per-node arrays to the sampler's
    one set of trees while it runs (its items are replaced, then given back equal), so that a caller
    that keeps no other reference to them holds every node once.
    """
    if estimator != "hdp":
        mm = float(m) if estimator == "m-estimate" else 0.0
        probs = [laplace(t) if estimator == "laplace" else m_estimate(t, mm) for t in trees]
        with np.errstate(divide="ignore"):
            return Estimates([np.log(p) for p in probs], [None] * len(trees), [None] * len(trees), {})
    from ..hdp.sampler import concatenate_cells, sampler_cells, stopping_info

    # the sampler's cells of each network (its dense counts are not read again), then every network's
    # trees and cells one after the other, without dense counts
    parts = [sampler_cells(t) for t in trees] if cells is None else list(cells)
    if cells is not None:
        cells.clear()
    combined = concatenate_trees(trees, counts=False)[0] if len(trees) > 1 else trees[0]
    tree_lo = np.cumsum([0] + [t.n_trees for t in trees])
    if len(trees) > 1:
        trees[:] = [without_nodes(t) for t in trees]
    cells = parts[0] if len(parts) == 1 else concatenate_cells(parts)
    del parts
    res, shared = _sample_once_each(combined, cells, sample, random_state, tying, dict(
        iterations=iterations, burn_in=burn_in, tying=tying, n_jobs=n_jobs, progress=progress, tolerance=tolerance,
        first_check=first_check))
    info = dict(iterations=res.iterations, sampler_seconds=res.seconds, n_samples=res.n_samples, burn_in=res.burn_in,
                **stopping_info(res, tolerance))
    if shared:
        info["shared_trees"] = shared
    if getattr(res, "cpu_seconds", None) is not None:
        info["sampler_cpu_seconds"] = res.cpu_seconds
    if len(trees) > 1:
        trees[:] = [nodes_from(combined, t, int(lo)) for t, lo in zip(trees, tree_lo)]
    del combined
    cells, groups, concs = [], [], []
    node_lo = 0
    for e, t in enumerate(trees):
        cells.append(_member_cells(res.cells, res.probabilities, node_lo, node_lo + t.n_nodes))
        if len(trees) == 1:  # one network: the sampler's groups as they are
            groups.append(res.node_group)
            concs.append(res.concentrations)
            continue
        # each member's groups, renumbered from 0 (tying groups never span trees)
        g = res.node_group[node_lo:node_lo + t.n_nodes]
        g_lo = int(g.min(initial=0))
        g_hi = int(g.max(initial=-1)) + 1
        groups.append(g - g_lo)
        concs.append(res.concentrations[g_lo:max(g_hi, g_lo)].copy())
        node_lo += t.n_nodes
    return Estimates(None, groups, concs, info, cells)


def _member_cells(cells, probabilities: np.ndarray, node_lo: int, node_hi: int):
    """``(SamplerCells, probabilities)`` of the nodes ``node_lo .. node_hi - 1`` of the sampler's ``cells``
    (one network's, its nodes numbered from 0)."""
    from ..hdp.sampler import SamplerCells

    start = cells.node_cell_start[node_lo:node_hi + 1]
    lo, hi = int(start[0]), int(start[-1])
    parent = cells.cell_parent[lo:hi]
    own = SamplerCells(start - lo, cells.cell_value[lo:hi], np.where(parent >= 0, parent - lo, -1).astype(np.int32),
                       cells.cell_raw[lo:hi])
    return own, probabilities[lo:hi]


def _sample_once_each(trees: ContextTrees, cells, sample, random_state, tying: str, kwargs: dict):
    """``sample(trees, random_state=..., cells=cells, **kwargs)``, every estimation problem sampled once.

    A tree that poses the same problem as an earlier one (:func:`~hdp_plugin.hdp.trees.tree_sources`:
    the same nodes and counts, as an ensemble's members often share on categorical data) is not sampled:
    it gets a copy of the earlier tree's tables, concentrations and final counts (the sampler's
    ``sources``). The other trees run on their own streams exactly as they would among all the trees (a
    tree's chain reads only its own stream and counts), so sharing changes nothing but the copies.
    Returns ``(result, number of trees that took a copy)``.
    """
    source = tree_sources(trees, cells)
    copies = int((source != np.arange(trees.n_trees)).sum())
    if not copies:
        return sample(trees, random_state=random_state, cells=cells, **kwargs), 0
    return sample(trees, random_state=random_state, cells=cells, sources=source, **kwargs), copies
