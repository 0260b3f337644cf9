"""What the helper process of :mod:`hdp_plugin.runtime.warm` runs on a first use: a tiny sampler, then a
tiny prediction, so that numba compiles their kernels into the shared on-disk cache while the fit that
started it discretises and learns its structure. ``python -m hdp_plugin.hdp.warmup`` says ``sampler``
on its standard output once the sampler's kernels are cached.
"""

from __future__ import annotations

from ..runtime import warm


def start() -> None:
    """Start the helper unless the sampler's kernels are cached or no core is to spare (never raises)."""
    warm.start("hdp_plugin.hdp.warmup", _sampler_cached)


def wait_for_sampler() -> None:
    """Before the sampler's first run: wait for the helper (if one runs) to have cached its kernels."""
    warm.wait_for_sampler()


def _sampler_cached() -> bool:
    from . import kernels

    return warm.cached(kernels.sample_trees)


def _tiny_trees():
    """One context tree of the shapes and dtypes a fit makes: a root over two class nodes (leaves)."""
    import numpy as np

    from .trees import ContextTrees

    i64 = lambda *v: np.asarray(v, np.int64)  # noqa: E731
    return ContextTrees(attrs=i64(0), tree_card=i64(2), tree_node_start=i64(0, 3), tree_var_start=i64(0, 1),
                        branch_vars=i64(-1), node_parent=i64(-1, 0, 0), node_depth=i64(0, 1, 1),
                        node_branch=i64(-1, 0, 1), node_cell_start=i64(0, 2, 4, 6), node_tree=i64(0, 0, 0),
                        is_leaf=np.asarray([False, True, True]), child_start=i64(0, -1, -1), child_table=i64(1, 2),
                        leaf_counts=i64(0, 0, 3, 1, 2, 4), n_classes=2, cardinalities=i64(2))


def _compile_sampler() -> None:
    import numpy as np

    from .sampler import sample
    from .tables import ProbabilityTables

    trees = _tiny_trees()
    res = sample(trees, iterations=12, random_state=0, n_jobs=1)
    ProbabilityTables.from_sampler(trees, res.cells, res.probabilities, np.log(np.full(2, 0.5)))


def _compile_prediction() -> None:
    import numpy as np

    from .predict import predict_log_proba
    from .tables import ProbabilityTables

    trees = _tiny_trees()
    tables = ProbabilityTables.from_dense(trees, np.full(trees.n_cells, np.log(0.5)), np.log(np.full(2, 0.5)),
                                          backoff_to_parent=True)
    predict_log_proba(tables, np.zeros((3, 1), np.uint8))


def main() -> int:
    _compile_sampler()
    print("sampler", flush=True)
    _compile_prediction()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
