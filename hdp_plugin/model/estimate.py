"""The estimation step of every fit: the tables of one network's context trees, or of several
networks' (an ensemble's members) in one run, by the HDP sampler or a baseline estimator.

One function for the in-memory single network, the in-memory ensemble and the streamed fits, so
the estimator dispatch (``hdp``, ``laplace``, ``m-estimate``, ``mle``) exists once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..hdp.tables import laplace, m_estimate
from ..hdp.trees import ContextTrees, concatenate_trees


@dataclass
class Estimates:
    """What :func:`estimate_tables` returns, network by network.

    Attributes
    ----------
    log_probs : list of ndarray
        ``log_probs[e]``: the log-probabilities of network ``e``'s cells (``-inf`` for a zero).
    node_group, concentrations : list
        ``node_group[e]`` (per node of network ``e``, numbered from 0 within it) and
        ``concentrations[e]`` (per group) of the HDP sampler; None for a baseline estimator.
    info : dict
        The sampler's figures for ``fit_info_`` (iterations, burn-in, seconds, the stopping rule's
        record); empty for a baseline estimator.
    """

    log_probs: list
    node_group: list
    concentrations: list
    info: dict


def estimate_tables(trees: list[ContextTrees], *, estimator: str, m: float, sample, random_state, iterations: int,
                    burn_in: int | None, tying: str, tolerance: float | None, n_jobs: int | None,
                    progress=None, first_check: int | None = None) -> Estimates:
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
    """
    if estimator != "hdp":
        mm = float(m) if estimator == "m-estimate" else 0.0
        probs = [laplace(t) if estimator == "laplace" else m_estimate(t, mm) for t in trees]
        with np.errstate(divide="ignore"):
            return Estimates([np.log(p) for p in probs], [None] * len(trees), [None] * len(trees), {})
    from ..hdp.sampler import stopping_info

    if len(trees) == 1:
        combined, cell_start = trees[0], np.array([0, trees[0].n_cells], np.int64)
    else:
        combined, cell_start = concatenate_trees(trees)
    res = sample(combined, iterations=iterations, burn_in=burn_in, tying=tying, random_state=random_state,
                 n_jobs=n_jobs, progress=progress, tolerance=tolerance, first_check=first_check)
    info = dict(iterations=res.iterations, sampler_seconds=res.seconds, n_samples=res.n_samples, burn_in=res.burn_in,
                **stopping_info(res, tolerance))
    if getattr(res, "cpu_seconds", None) is not None:
        info["sampler_cpu_seconds"] = res.cpu_seconds
    log_probs, groups, concs = [], [], []
    node_lo = 0
    for e, t in enumerate(trees):
        with np.errstate(divide="ignore"):
            log_probs.append(np.log(res.probabilities[cell_start[e]:cell_start[e + 1]]))
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
    return Estimates(log_probs, groups, concs, info)
