"""``hdp-bnc train``: learn a classifier from data (read whole or in batches, locally or on Dask) and
write its model file."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import config
from ..errors import ParameterError
from ..params import default as _default
from .common import categorical_option, cli_errors as _errors
from .files import MODEL_KIND, _fitting, _limits, _open_source, _option_names, _output, _read, force_option
from .options import (BurnInOpt, CategoricalOpt, ClassOpt, ClassValuesOpt, DecimalOpt, DiscretizationOpt,
                      EstimatorOpt, FormatOpt, IterationsOpt, KeepColumnsOpt, KOpt, MaxCardinalityOpt, MaxInputOpt,
                      MembersOpt, MOpt, SeedOpt, SeparatorOpt, StructureOpt, ThreadsOpt, TyingOpt, decimal_option,
                      one_configuration, separator_option)
from .progress import Quiet, Verbose, _describe, _fit_phase, _Out, _Phases, _print_warnings, _warnings_once

log = logging.getLogger(__name__)

ForceOpt = force_option("an hdp-bnc model file")


def train(
    data: Annotated[Path, typer.Argument(help="Training data: an ARFF, Arrow IPC/Feather, Parquet or CSV file, or a "
                                          "directory or glob of them (read in batches, in bounded memory).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the model file (suggested suffix .hdpbnc).")],
    class_attribute: ClassOpt = None,
    structure: StructureOpt = _default("structure"),
    k: KOpt = str(_default("k")),
    members: MembersOpt = str(_default("n_members")),
    estimator: EstimatorOpt = _default("estimator"),
    iterations: IterationsOpt = "auto",
    burn_in: BurnInOpt = None,
    tying: TyingOpt = _default("tying"),
    m: MOpt = _default("m"),
    seed: SeedOpt = 0,
    threads: ThreadsOpt = None,
    discretization: DiscretizationOpt = _default("discretization"),
    categorical: CategoricalOpt = None,
    keep_columns: KeepColumnsOpt = None,
    class_values: ClassValuesOpt = None,
    data_format: FormatOpt = None,
    separator: SeparatorOpt = None,
    decimal: DecimalOpt = None,
    max_input_mb: MaxInputOpt = None,
    max_cardinality: MaxCardinalityOpt = None,
    stream: StreamOpt = False,
    discretization_sample: SampleOpt = None,
    engine: EngineOpt = "local",
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    force: ForceOpt = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Learn a classifier from DATA and write it to a model file."""
    started = time.perf_counter()  # the wall time of the command: reading, fitting, writing
    out = _Out(quiet, verbose)
    with _errors():
        params = one_configuration("train", structure=structure, k=k, members=members, estimator=estimator,
                                   iterations=iterations, burn_in=burn_in, tying=tying, m=m, seed=seed,
                                   threads=threads, discretization=discretization)
        configs = [params]
        categorical = categorical_option(categorical)
        if categorical is not None:
            params["categorical_features"] = categorical
        keep_columns = categorical_option(keep_columns, "--keep-columns")
        if keep_columns is not None:
            params["keep_columns"] = keep_columns
        separator = separator_option(separator)
        decimal = decimal_option(decimal)
        from ..model import save_model

        output = _output(output, data, kind=MODEL_KIND, force=force)
        streamed = _streamed(data, stream, discretization_sample, engine, scheduler, workers, class_values)
        limits = _limits(max_input_mb, max_cardinality)
        if streamed and (max_input_mb is not None or max_cardinality is not None):
            raise ParameterError("--max-input-mb and --max-cardinality apply to data read whole, not in batches "
                                 "(a directory, a glob or --stream: read in bounded memory)")
        with out.progress() as bar, _warnings_once() as caught:
            line = _Phases(bar)
            line.phase(f"reading {data}")
            ds = (_open_source(data, class_attribute, data_format, discretization_sample, separator, decimal)
                  if streamed else _read(data, class_attribute, data_format, class_values, categorical, limits,
                                         configs, separator, decimal))
            with _engine(engine, scheduler, workers):
                from ..model import BayesNetClassifier

                line.phase(_fit_phase(params, streamed))
                with _option_names(), _fitting(limits, ds, configs):
                    clf = BayesNetClassifier(**params).fit(ds, progress=line.sampling(params))
            info = clf.fit_info_
            log.info("structure in %.3f s; tables in %.3f s", info.get("structure_seconds", 0.0),
                     info.get("sampler_seconds", info.get("fit_seconds", 0.0)))
            line.phase(f"writing {output}")
            save_model(clf, output)
        wall = time.perf_counter() - started
        nets = [mb.tables for mb in clf.members_]
        _print_warnings(clf.fit_info_.get("warnings", []), caught)
        ran = dict(params, k=clf.k_used_)  # the k used: at most the attributes less one
        if "iterations" in info:
            ran["iterations"] = info["iterations"]
        durations = _durations(info["fit_seconds"], wall)
        if info.get("compile_seconds"):  # a first use: not in the fit time, in the wall time
            durations += f" (compiling numba's kernels: {info['compile_seconds']:.2f} s)"
        out.note(f"{output}: {_describe(ran, full=True)} on {clf.fit_info_['rows']} rows, "
                 f"{sum(t.n_trees for t in nets)} trees, {sum(t.n_nodes for t in nets)} nodes, "
                 f"{sum(t.n_cells for t in nets)} cells; {durations}")


def _durations(fit_seconds: float, wall_seconds: float) -> str:
    """train's two durations, named as ``info`` and docs/cli.md name them."""
    return f"fit time {fit_seconds:.2f} s, wall time {wall_seconds:.2f} s"


StreamOpt = Annotated[bool, typer.Option("--stream", help="Read DATA in batches even if it is one file (a "
                                          "directory or glob always is): memory bounded by the model, not the rows.")]


SampleOpt = Annotated[Optional[int], typer.Option(
    "--discretization-sample", metavar="ROWS",
    help="Batches only: numeric attributes are discretised on a sample of this many rows; data with no more "
         "rows is discretised exactly as in memory.", show_default="1,000,000")]


EngineOpt = Annotated[str, typer.Option("--engine", help="Where the passes over batches run: local (this process) "
                                        "or dask (a Dask cluster; needs Dask, the distributed extra of hdp-plugin).")]


SchedulerOpt = Annotated[Optional[str], typer.Option(
    "--scheduler", metavar="tcp://HOST:PORT",
    help="With --engine dask: the scheduler of an existing cluster; without it a LocalCluster starts here.",
    show_default="a LocalCluster")]


WorkersOpt = Annotated[Optional[int], typer.Option(
    "--workers", help="With --engine dask and no --scheduler: worker processes of the LocalCluster.",
    show_default=str(config.DASK_LOCAL_WORKERS))]


def _streamed(data: Path, stream: bool, sample, engine: str, scheduler, workers, class_values) -> bool:
    """Whether train reads DATA as batches; checks the batch-only options."""
    from ..data.stream import is_batch_path
    from ..distributed import ENGINES

    if engine not in ENGINES:
        raise ParameterError(f"--engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    if engine != "dask" and (scheduler is not None or workers is not None):
        raise ParameterError("--scheduler and --workers need --engine dask")
    if workers is not None and workers < 1:
        raise ParameterError(f"--workers must be >= 1, got {workers!r}")
    streamed = stream or engine == "dask" or is_batch_path(data)
    if streamed and class_values is not None:
        raise ParameterError("--class-values is not available when DATA is read in batches")
    if not streamed and sample is not None:
        raise ParameterError("--discretization-sample applies to data read in batches (a directory, a glob "
                             "or --stream)")
    if sample is not None and sample < 1:
        raise ParameterError(f"--discretization-sample must be >= 1, got {sample!r}")
    return streamed


@contextmanager
def _engine(name: str, scheduler, workers):
    if name == "local":
        yield None
        return
    from ..distributed import engine

    with engine(name, scheduler=scheduler, n_workers=workers) as eng:
        yield eng

