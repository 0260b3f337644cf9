"""The Dask engine: the passes of a streamed fit on a Dask cluster.

* the schema, counting and tree-cell passes are a map over the partitions (one task per file, each
  reading its own file on the worker) and a tree reduce of the partial results, in partition order;
  every partial is integers (or label sets and a sample chosen by row position), so the result is
  the single process's whatever the number of workers or partitions;
* SkDB's two passes are maps and tree reduces too: each partition's context tries, merged into one
  trie (integer counts), sent to every worker, then each partition's leave-one-out sums
  against it, merged (exact fixed-point sums: :mod:`hdp_plugin.structure.loo_kernels`), so the selection
  is the single process's, bit for bit;
* an ESKDB's members share the passes: per partition one task reads the file once and codes it as
  every member codes it, then counts, builds the tries of, sums the leave-one-out errors of, or
  counts the tree cells of every member; the members' partials are merged member by member in one
  tree reduce, and the members' merged tries are sent to every worker for the leave-one-out pass
  (:func:`hdp_plugin.structure.selective.selective_kdbs`: each member's selection is the single
  process's, bit for bit). Members are taken in groups of
  :data:`hdp_plugin.distributed.local.SHARED_PASS_MEMBERS` for the tries and leave-one-out passes, so
  a worker holds at most that many members' tries;
* the trees are sampled as independent tasks, largest first, each with its own generator state
  (:func:`hdp_plugin.hdp.rng.tree_states` of the model's seed): the tables are bit for bit those of
  sampling all the trees in one process;
* :meth:`DaskEngine.predict_partitions` writes one Parquet file of predictions per partition.

Workers need the hdp_plugin package (the same version) installed; they read the data files by the
paths the client gives, so the files must be on storage every worker sees.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .. import config
from ..errors import ParameterError

log = logging.getLogger(__name__)

MISSING = "the dask engine needs dask and distributed: pip install 'dask[distributed]'"


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ParameterError(MISSING) from None
    return distributed


# -- tasks (module level, so that workers import them) ---------------------------------------------
def _partition_rows(part) -> int:
    if part.format == "parquet":
        import pyarrow.parquet as pq

        from ..data._files import check_path

        from ..data.arrow import _READ_ERRORS

        try:
            return int(pq.ParquetFile(str(check_path(part.files[0]))).metadata.num_rows)
        except _READ_ERRORS:
            log.debug("%s: no row count in its footer; counting the rows", part.files[0])
    return sum(t.num_rows for t in part.batches())


def _scan(part, row0, categorical=None):
    from ..data.stream import scan_schema

    return scan_schema(part, row0, categorical)


def _merge(a, b):
    return a.merge(b)


def _count_members(part, attribute_sets, class_attribute, cards, n_classes, row0, pairs=True):
    from .local import count_members

    return count_members(part, attribute_sets, class_attribute, cards, n_classes, row0, pairs=pairs)


def _cells_members(part, attribute_sets, class_attribute, trees, cards, n_classes):
    from .local import cells_members

    return cells_members(part, attribute_sets, class_attribute, trees, cards, n_classes)


def _tries_members(part, attribute_sets, class_attribute, cards, n_classes, parents):
    from .local import tries_members

    return tries_members(part, attribute_sets, class_attribute, cards, n_classes, parents)


def _loo_members(part, attribute_sets, class_attribute, tries, cards, n_classes, n_y, n_rows, orders, max_k, m):
    from .local import loo_members

    return loo_members(part, attribute_sets, class_attribute, tries, cards, n_classes, n_y, n_rows, orders, max_k, m)


class _DaskMemberPasses:
    """The members' tries and leave-one-out passes (the ``passes`` of
    :func:`~hdp_plugin.structure.selective.selective_kdbs`): per partition one task for every member,
    the members' partials merged member by member in one tree reduce. Tasks get the cardinalities and
    class counts, not the pairwise counts."""

    def __init__(self, engine, source, attribute_sets, class_attribute):
        self.engine, self.source = engine, source
        self.attribute_sets, self.class_attribute = attribute_sets, class_attribute

    def tries(self, stats, parents):
        submit = self.engine.client.submit
        cards = [s.cardinalities for s in stats]
        futs = [submit(_tries_members, p, self.attribute_sets, self.class_attribute, cards, stats[0].n_classes,
                       parents, pure=False) for p in self.source.partitions()]
        return self.engine._reduce(futs).result()

    def loo(self, stats, tries, orders, max_k, m):
        client = self.engine.client
        shared = client.scatter(list(tries), broadcast=True, hash=False)  # one future per member's tries
        s0 = stats[0]  # every member counts the same rows: the same class counts
        futs = [client.submit(_loo_members, p, self.attribute_sets, self.class_attribute, shared,
                              [s.cardinalities for s in stats], s0.n_classes, s0.n_y, s0.n_rows, orders, max_k, m,
                              pure=False) for p in self.source.partitions()]
        return self.engine._reduce(futs).parts


def _sample_trees(sub, states, kwargs):
    from ..hdp.sampler import sample

    res = sample(sub, random_state=states, n_jobs=1, **kwargs)
    return (res.probabilities, res.concentrations, res.node_group, res.table_counts, res.customer_counts,
            res.n_samples, res.burn_in, res.tree_iterations)


def _predict_part(clf, part, path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer, n = None, 0
    for _, _, proba in clf.predict_source(part):
        t = pa.table({f"p_{c}": proba[:, j] for j, c in enumerate(clf.classes_)}
                     | {"predicted": pa.array(np.asarray([str(c) for c in clf.classes_], dtype=object)
                                              [np.argmax(proba, axis=1)], pa.string())})
        writer = writer or pq.ParquetWriter(path, t.schema)
        writer.write_table(t)
        n += t.num_rows
    if writer is not None:
        writer.close()
    return n


# -- the engine ------------------------------------------------------------------------------------
class DaskEngine:
    """Runs the passes of a fit (:class:`hdp_plugin.distributed.Engine`) on a Dask cluster.

    ``scheduler``: the address of an existing cluster's scheduler (``tcp://host:8786``); None starts a
    ``LocalCluster`` of ``n_workers`` processes (default ``config.DASK_LOCAL_WORKERS``) with one thread each,
    closed by :meth:`close`.
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, n_workers: int | None = None):
        _import_distributed()
        from distributed import Client, LocalCluster

        self._cluster = None
        if scheduler is None:
            self._cluster = LocalCluster(n_workers=n_workers or config.DASK_LOCAL_WORKERS, threads_per_worker=1,
                                         processes=True,
                                         dashboard_address=None)
            self.client = Client(self._cluster)
        else:
            if n_workers is not None:
                raise ParameterError("n_workers is for the LocalCluster; an existing cluster has its own workers")
            try:
                self.client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError, ValueError) as e:
                raise ParameterError(f"cannot reach the Dask scheduler at {scheduler} ({e})") from None

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- helpers -------------------------------------------------------------------------------------
    def _reduce(self, futures):
        """Pairwise merge of adjacent partials, level by level (partition order kept), on the workers."""
        while len(futures) > 1:
            nxt = [self.client.submit(_merge, futures[i], futures[i + 1], pure=False)
                   for i in range(0, len(futures) - 1, 2)]
            if len(futures) % 2:
                nxt.append(futures[-1])
            futures = nxt
        return futures[0].result()

    def _offsets(self, source):
        parts = source.partitions()
        key = (tuple(source.files), source.format)
        if getattr(self, "_offsets_key", None) != key:
            rows = self.client.gather(self.client.map(_partition_rows, parts, pure=False))
            self._offsets_key = key
            self._offsets_val = np.concatenate(([0], np.cumsum(rows)))[:-1].tolist()
        return parts, self._offsets_val

    # -- the passes ----------------------------------------------------------------------------------
    def scan(self, source, categorical=None):
        parts, offsets = self._offsets(source)
        return self._reduce(self.client.map(_scan, parts, offsets, [categorical] * len(parts), pure=False))

    def sample(self, trees, *, iterations, burn_in, tying, random_state, n_jobs=None, progress=None, tolerance=None,
               first_check=None, cells=None, sources=None):
        """Every tree an independent task (largest first), with its own stream of ``random_state``; a tree
        that is not its own source (``sources``, as :func:`hdp_plugin.hdp.sampler.sample` takes it) takes
        its source's result."""
        from ..hdp.rng import tree_states
        from ..hdp.sampler import SamplerResult
        from ..params import default_burn_in
        from ..hdp.sampler import sampler_cells, take_cells
        from ..hdp.trees import take_trees

        started = time.perf_counter()
        given = burn_in
        states = tree_states(random_state, trees.n_trees)
        cells = sampler_cells(trees) if cells is None else cells
        sizes = np.diff(trees.node_cell_start[trees.tree_node_start])
        # every tree a task of its own: its stopping rule (tolerance) reads its own chain only
        kwargs = {"iterations": iterations, "burn_in": burn_in, "tying": tying, "tolerance": tolerance,
                  "first_check": first_check}
        sources = np.arange(trees.n_trees) if sources is None else np.asarray(sources, np.int64)
        futs = {}
        for tr in np.argsort(-sizes, kind="stable"):
            if sources[tr] != tr:
                continue
            futs[int(tr)] = self.client.submit(_sample_trees, take_trees(trees, [tr]), states[[tr]],
                                               {**kwargs, "cells": take_cells(cells, trees, [tr])},
                                               priority=int(sizes[tr]), pure=False)
        done = 0
        parts = {}
        for tr, f in futs.items():
            parts[tr] = f.result()
            done += 1
            if progress is not None and progress(iterations * done // max(1, len(futs)), iterations) is False:
                from ..hdp.sampler import Cancelled

                self.client.cancel(list(futs.values()))
                raise Cancelled("sampling cancelled")
        ordered = [parts[int(sources[t])] for t in range(trees.n_trees)]
        groups, node_groups = 0, []
        for p in ordered:
            node_groups.append(p[2] + groups)
            groups += p[1].shape[0]

        def cat(i, dtype):
            return np.concatenate([p[i] for p in ordered]).astype(dtype) if ordered else np.zeros(0, dtype)

        tree_its = cat(7, np.int64)
        ran = int(tree_its.max(initial=0)) or int(iterations)
        burn_in = default_burn_in(ran) if given is None else int(given)
        return SamplerResult(probabilities=cat(0, np.float64), concentrations=cat(1, np.float64),
                             node_group=np.concatenate(node_groups) if ordered else np.zeros(0, np.int64),
                             n_samples=ran - burn_in, iterations=ran,
                             burn_in=burn_in, seconds=time.perf_counter() - started,
                             table_counts=cat(3, np.int64), customer_counts=cat(4, np.int64), tree_iterations=tree_its,
                             cells=cells)

    def predict_partitions(self, clf, source, directory) -> int:
        """Predictions of every partition of ``source`` as ``directory/part-NNNNN.parquet`` (a map over the
        partitions); returns the number of rows."""
        import os

        os.makedirs(directory, exist_ok=True)
        parts = source.partitions()
        paths = [os.path.join(str(directory), f"part-{i:05d}.parquet") for i in range(len(parts))]
        clf_f = self.client.scatter(clf, broadcast=True)
        futs = [self.client.submit(_predict_part, clf_f, p, path, pure=False) for p, path in zip(parts, paths)]
        return int(sum(self.client.gather(futs)))

    # -- ensembles: every member's work on a partition in one task ----------------------------------
    def count_members(self, source, attribute_sets, class_attribute, cards, n_classes, pairs=True):
        parts, offsets = self._offsets(source)
        futs = [self.client.submit(_count_members, p, attribute_sets, class_attribute, cards, n_classes, o, pairs,
                                   pure=False) for p, o in zip(parts, offsets)]
        return self._reduce(futs).result()

    def select_members(self, source, attribute_sets, class_attribute, stats, k, m, orders, n_jobs=None,
                       max_cells=None):
        """Every member's SkDB selection: the tries of all members per partition, merged; then their
        leave-one-out sums per partition, merged (in groups of ``SHARED_PASS_MEMBERS`` members)."""
        from .local import select_in_groups

        return select_in_groups(attribute_sets, stats, k, m, orders,
                                lambda g: _DaskMemberPasses(self, source, attribute_sets[g], class_attribute),
                                max_cells)

    def cells_members(self, source, attribute_sets, class_attribute, trees, cards, n_classes):
        futs = [self.client.submit(_cells_members, p, attribute_sets, class_attribute, trees, cards, n_classes,
                                   pure=False) for p in source.partitions()]
        return self._reduce(futs).result()
