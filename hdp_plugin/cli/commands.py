"""The ``hdp-bnc`` command line: train, predict, evaluate, info and show.

Thin commands over the library. Every error the library raises on purpose (:class:`HDPError`)
becomes one line ``error: ...`` on stderr and a non-zero exit code (2 for bad data, options or
model files); progress bars appear only on a terminal and never with ``--quiet``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
import shutil
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from .. import config
from .common import categorical_option, cli_errors as _errors, typer_app
from .options import (BurnInOpt, CategoricalOpt, ClassOpt, ClassValuesOpt, DiscretizationList, DiscretizationOpt,
                      EstimatorList, EstimatorOpt, FoldSeedOpt, FormatOpt, IterationsList, IterationsOpt,
                      KeepColumnsOpt, KList, KOpt, MaxCardinalityOpt, MaxInputOpt, MembersList, MembersOpt, MOpt,
                      SeedOpt, SeparatorOpt, StructureList, StructureOpt, ThreadsOpt, TyingList, TyingOpt,
                      configurations, one_configuration, separator_option, split)
from ..params import BY_NAME as PARAM, default as _default, resolved_iterations, structure_name, usable_k
from .._version import __version__
from ..errors import HDPError, ParameterError

if TYPE_CHECKING:  # numpy is imported where it is used: --help and the client commands stay light
    import numpy as np

log = logging.getLogger(__name__)

app = typer_app("hdp-bnc", "Bayesian network classifiers (NB, TAN, kDB, SkDB, ESKDB) with HDP-estimated probability tables.")



# ------------------------------------------------------------------------------------------
# shared options
# ------------------------------------------------------------------------------------------
def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"hdp-bnc {__version__} (model format {config.MODEL_FORMAT_MAJOR}.{config.MODEL_FORMAT_MINOR})")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True,
                     help="Print the version of hdp-bnc and of its model format, then exit."),
    ] = False,
) -> None:
    """Bayesian network classifiers (NB, TAN, kDB, SkDB, ESKDB) with HDP-estimated probability tables.

    After Petitjean, Buntine, Webb and Zaidi, "Accurate parameter estimation for Bayesian network
    classifiers using hierarchical Dirichlet processes", Machine Learning 107 (2018).
    """


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print no progress bars and no summaries, only results and errors.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log what each stage of the pipeline does, on stderr.")]


# ------------------------------------------------------------------------------------------
# output, logging, errors
# ------------------------------------------------------------------------------------------
@dataclass
class _Out:
    """Where messages go, and whether progress bars are wanted."""

    quiet: bool = False
    verbose: bool = False

    def __post_init__(self) -> None:
        if self.verbose:  # everything hdp_plugin logs; only warnings from other libraries
            logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True,
                                format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
            logging.getLogger("hdp_plugin").setLevel(logging.DEBUG)

    @property
    def bars(self) -> bool:
        """Progress bars only on a terminal, and never with --quiet."""
        return not self.quiet and sys.stderr.isatty()

    def note(self, message: str) -> None:
        """A summary line on stderr (silent with --quiet), so stdout stays machine-readable."""
        if not self.quiet:
            typer.echo(message, err=True)

    @contextmanager
    def progress(self):
        """A rich Progress on stderr when bars are wanted, else None."""
        if not self.bars:
            yield None
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
        from rich.text import Text

        class Counts(ProgressColumn):  # i/N, and nothing for a phase of unknown length
            def render(self, task):
                return Text("" if task.total is None else f"{int(task.completed)}/{int(task.total)}")

        with Progress(TextColumn("{task.description}"), BarColumn(), Counts(), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True) as bar:
            yield bar


#: the loggers whose warnings a fit also puts in ``fit_info_["warnings"]``, which the commands print
_FIT_LOGGERS = ("hdp_plugin.model.classifier", "hdp_plugin.model.streaming")


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING


@contextmanager
def _warnings_once(hold_fit_logs: bool = True):
    """Collect what reading and fitting warn of, for :func:`_print_warnings` to print each once as one
    ``warning:`` line: the library's warnings (``warnings.warn``) are caught rather than printed with
    their file and line, and with ``hold_fit_logs`` the fit's logged warnings, which ``fit_info_``
    holds too, are held back."""
    below = _BelowWarning()
    loggers = [logging.getLogger(name) for name in _FIT_LOGGERS] if hold_fit_logs else []
    for lg in loggers:
        lg.addFilter(below)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        for lg in loggers:
            lg.removeFilter(below)


def _print_warnings(fit_warnings, caught) -> None:
    """Every warning of a command once, as ``warning: ...`` on stderr (even with --quiet: they say what
    the result is made of); warnings from outside hdp_plugin keep Python's own form."""
    package = str(Path(__file__).resolve().parents[1])  # hdp_plugin/
    lines = []
    for w in caught:
        if issubclass(w.category, UserWarning) and str(Path(w.filename).resolve()).startswith(package):
            lines.append(str(w.message))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    lines += [str(w) for w in fit_warnings]
    for line in dict.fromkeys(lines):
        typer.echo(f"warning: {line}", err=True)


# ------------------------------------------------------------------------------------------
# training configurations in words
# ------------------------------------------------------------------------------------------
def _describe(params: dict, *, full: bool = False) -> str:
    """A short name of a configuration: ``kDB-3 hdp``, ``NB m-estimate``."""
    text = f"{structure_name(params['structure'], params['k'], params.get('n_members'))} {params['estimator']}"
    if full and params["estimator"] == "hdp":
        its = params["iterations"]
        text += f" {its} it." if its is not None else \
            f" auto it. (at most {resolved_iterations(params['structure'], None)})"
    return text


class _Phases:
    """The progress line of a command on a terminal: the phase it is in (``reading DATA``,
    ``discretising, learning the structure``, ``sampling kDB-5 hdp`` with its iterations i/N,
    ``writing MODEL``). Does nothing without a bar (piped stderr, ``--quiet``)."""

    def __init__(self, bar):
        self.bar, self.task, self.text = bar, None, None

    def phase(self, text: str, total: int | None = None) -> None:
        """Show ``text`` from now on: with a count of ``total`` steps, or as work of unknown length."""
        if self.bar is None:
            return
        if self.task is not None:
            self.bar.update(self.task, visible=False)
        self.task, self.text = self.bar.add_task(text, total=total), text

    def sampling(self, params: dict):
        """The ``progress`` callback of ``fit``: the sampling phase and its iterations (None without a
        bar or without HDP)."""
        if self.bar is None or params["estimator"] != "hdp":
            return None
        label = f"sampling {_describe(params)}"

        def hook(done: int, total: int) -> None:
            if self.text != label:
                self.phase(label, total)
            self.bar.update(self.task, completed=done, total=total)

        return hook


def _fit_phase(params: dict, streamed: bool = False) -> str:
    """What ``fit`` does before the sampler reports (the phase until then)."""
    what = ("learning the structures of the members" if params["structure"] == "eskdb"
            else "learning the structure")
    if params["estimator"] != "hdp":
        what += " and the tables"
    return ("passes over the batches: " if streamed else "") + f"discretising, {what}"


def _format(path: Path, fmt: str | None) -> str:
    """The data format of ``path``: ``--format``, else its name's; one line when neither tells it."""
    from ..data.formats import FORMATS, format_of

    if path.is_dir():  # only train and predict read a directory (in batches); --format does not help
        raise ParameterError(
            f"{path} is a directory, not a data file; give an .arff, .arrow/.feather/.ipc, .parquet or .csv file "
            f"(train and predict also read a directory or glob of them, in batches)"
        )
    try:
        return format_of(path, fmt)
    except ParameterError:
        if fmt is not None:
            raise ParameterError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}") from None
        raise ParameterError(
            f"{path} is named with no known extension; give an .arff, .arrow/.feather/.ipc, .parquet or .csv "
            f"file, or name the format with --format ({', '.join(FORMATS)})"
        ) from None


def _csv_format(path: Path, fmt: str | None, separator: str | None) -> str:
    """:func:`_format`, and ``--separator`` given only for a CSV file."""
    fmt = _format(path, fmt)
    if separator is not None and fmt != "csv":
        raise ParameterError(f"--separator applies to CSV files, and {path} is read as {fmt}")
    return fmt


def _limits(max_input_mb: float | None, max_cardinality: int | None):
    """The reading limits of --max-input-mb and --max-cardinality (their defaults: the daemon's)."""
    from ..data.limits import Limits

    if max_input_mb is not None and not max_input_mb > 0:
        raise ParameterError(f"--max-input-mb must be > 0, got {max_input_mb!r}")
    if max_cardinality is not None and max_cardinality < 2:
        raise ParameterError(f"--max-cardinality must be >= 2, got {max_cardinality!r}")
    return Limits.of_options(max_input_mb, max_cardinality)


def _read(path: Path, class_attribute: str | None, fmt: str | None = None, class_values: str | None = None,
          categorical: list[str] | None = None, limits=None, configs=(), separator: str | None = None):
    from ..data.readers import read_within

    from ..runtime.threads import members_at_once

    eskdb = [c for c in configs if c["structure"] == "eskdb"]
    at_once = max([members_at_once(c) for c in configs] + [1])  # ESKDB members are built on threads at once
    ds = read_within(path, limits if limits is not None else _limits(None, None), class_attribute=class_attribute,
                     format=_csv_format(path, fmt, separator), structure="eskdb" if eskdb else None,
                     members_at_once=at_once, separator=separator)
    if class_values is not None:
        ds = ds.with_class_values(split("--class-values", class_values) if class_values.strip() else [])
    if categorical is not None:  # the declared columns' values in the whole file, as a text column's
        from ..data.categorical import declare_categorical

        ds = declare_categorical(ds, categorical, label="--categorical")
    return ds


def _fitting(limits, ds, configs):
    """A fit's pairwise statistics within what --max-input-mb's working memory leaves beside the data's
    (data read whole; batches are read in bounded memory, with no --max-input-mb)."""
    if not hasattr(ds, "n_rows"):
        return contextlib_nullcontext()
    from ..runtime.threads import members_at_once

    eskdb = any(c["structure"] == "eskdb" for c in configs)
    at_once = max([members_at_once(c) for c in configs] + [1])
    return limits.fitting(ds.n_rows, len(ds.attributes) + 1, "eskdb" if eskdb else None, at_once)


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
@app.command()
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
    max_input_mb: MaxInputOpt = None,
    max_cardinality: MaxCardinalityOpt = None,
    stream: StreamOpt = False,
    discretization_sample: SampleOpt = None,
    engine: EngineOpt = "local",
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
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
        from ..model import save_model

        output = _output(output, data)
        streamed = _streamed(data, stream, discretization_sample, engine, scheduler, workers, class_values)
        limits = _limits(max_input_mb, max_cardinality)
        if streamed and (max_input_mb is not None or max_cardinality is not None):
            raise ParameterError("--max-input-mb and --max-cardinality apply to data read whole, not in batches "
                                 "(a directory, a glob or --stream: read in bounded memory)")
        with out.progress() as bar, _warnings_once() as caught:
            line = _Phases(bar)
            line.phase(f"reading {data}")
            ds = (_open_source(data, class_attribute, data_format, discretization_sample, separator) if streamed
                  else _read(data, class_attribute, data_format, class_values, categorical, limits, configs,
                             separator))
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


@contextmanager
def _option_names():
    """A fit's errors about the names of ``categorical_features`` or ``keep_columns`` (checked against
    the data, for batches against the first batch) name the option as typed."""
    try:
        yield
    except ParameterError as exc:
        for param, option in (("categorical_features", "--categorical"), ("keep_columns", "--keep-columns")):
            if str(exc).startswith(param + " "):
                raise ParameterError(option + str(exc)[len(param):]) from None
        raise


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


def _open_source(data: Path, class_attribute, fmt, sample=None, separator: str | None = None):
    from ..data.stream import DEFAULT_SAMPLE_ROWS, open_batches

    try:
        return open_batches(data, class_attribute=class_attribute, format=fmt,
                            sample_rows=DEFAULT_SAMPLE_ROWS if sample is None else sample, separator=separator)
    except ParameterError as exc:
        if separator is not None and str(exc).startswith("a separator applies"):
            raise ParameterError("--separator" + str(exc)[len("a separator"):]) from None
        raise


@contextmanager
def _engine(name: str, scheduler, workers):
    if name == "local":
        yield None
        return
    from ..distributed import engine

    with engine(name, scheduler=scheduler, n_workers=workers) as eng:
        yield eng


# ------------------------------------------------------------------------------------------
# predict
# ------------------------------------------------------------------------------------------
def _prediction_table(clf, ds) -> tuple[list[str], list[list], np.ndarray | None]:
    import numpy as np

    proba = clf.predict_proba(ds)
    labels = [str(c) for c in clf.classes_]
    pred = np.argmax(proba, axis=1)
    actual = None
    if ds.class_attribute.name == clf.class_attribute_.name and (ds.y >= 0).any():
        actual = ds.y
    header = (["actual"] if actual is not None else []) + ["predicted"] + [f"p_{c}" for c in labels]
    rows = []
    for i in range(proba.shape[0]):
        row = [] if actual is None else [ds.class_values[actual[i]] if actual[i] >= 0 else None]
        row.append(labels[pred[i]])
        row.extend(float(p) for p in proba[i])
        rows.append(row)
    return header, rows, proba


def _output(path: Path, *inputs: Path) -> Path:
    """The file ``-o`` writes (a link is written through); ParameterError for a device, FIFO or
    directory, for one of the command's own input files, or in a directory that is missing or takes
    no new file. Commands check it before reading their data."""
    from .._fs import check_output

    target, problem = check_output(path, inputs, directory=True)
    if problem:
        raise ParameterError(f"-o {path}: {problem}; give another file name")
    return target


def _prediction_suffix(path: Path | None, streamed: bool) -> str:
    """The suffix of predict's ``-o`` (``.csv`` for stdout), which picks the format; ParameterError for
    one with no format (for predictions written batch by batch when ``streamed``)."""
    from ..data.writers import BATCH_SUFFIXES, PREDICTION_SUFFIXES

    suffix = path.suffix.lower() if path is not None else ".csv"
    if streamed and suffix not in BATCH_SUFFIXES:
        raise ParameterError(f"-o must end in .parquet, .arrow, .feather or .csv when DATA is a directory or glob "
                             f"or --stream is given, got {path.name!r}")
    if suffix not in PREDICTION_SUFFIXES:
        raise ParameterError(f"-o must end in .csv, .arrow, .feather, .parquet or .arff, got {path.name!r}")
    return suffix


def _write_predictions(path: Path | None, header, rows, class_labels, relation: str, inputs=()) -> None:
    from ..data.writers import write_predictions

    suffix = _prediction_suffix(path, False)
    if path is not None:
        from .._fs import replacing

        with replacing(_output(path, *inputs)) as tmp:  # atomically: a full disk leaves no half file
            write_predictions(tmp, suffix, header, rows, class_labels, relation)
        return
    write_predictions(None, suffix, header, rows, class_labels, relation)


def _prediction_threads(threads: int | None) -> None:
    """Threads of the prediction kernels (numba's pool): all cores unless --threads says fewer."""
    if threads is None:
        return
    if threads < 1:
        raise ParameterError(f"--threads must be >= 1, got {threads!r}")
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


@app.command()
def predict(
    model: Annotated[Path, typer.Argument(help="A model file written by hdp-bnc train.")],
    data: Annotated[Path, typer.Argument(help="Data with the training attributes; its class column, if any, is reported as 'actual'.")],
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Output file; its suffix picks the format (.csv, .arrow, .feather, .parquet, .arff). CSV on stdout by default.",
                     show_default="CSV on stdout"),
    ] = None,
    threads: Annotated[Optional[int], typer.Option(
        *PARAM["n_jobs"].cli, help="Threads that compute the predictions, at least 1; by default all cores.",
        show_default="all cores")] = None,
    data_format: FormatOpt = None,
    separator: SeparatorOpt = None,
    max_input_mb: MaxInputOpt = None,
    max_cardinality: MaxCardinalityOpt = None,
    stream: Annotated[bool, typer.Option("--stream", help="Read DATA in batches even if it is one file (a directory "
                                         "or glob always is) and write the predictions batch by batch: memory "
                                         "bounded by the model and a batch, not the rows; -o must then be .parquet, "
                                         ".arrow, .feather or .csv.")] = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Print or write the predicted class and the probability of every class for each row of DATA."""
    out = _Out(quiet, verbose)
    with _errors():
        from ..data.readers import read_conformed_within
        from ..model import load_model

        _prediction_threads(threads)
        separator = separator_option(separator)
        limits = _limits(max_input_mb, max_cardinality)
        from ..data.stream import is_batch_path

        streamed = stream or is_batch_path(data)
        if output is not None:  # before the work: a format, a place or a file it cannot write is refused at once
            _output(output, model, data)
            _prediction_suffix(output, streamed)
        clf = load_model(model)
        if streamed:
            if max_input_mb is not None or max_cardinality is not None:
                raise ParameterError("--max-input-mb and --max-cardinality apply to data read whole, not in "
                                     "batches (a directory, a glob or --stream: read in bounded memory)")
            _stream_predictions(clf, _open_source(data, None, data_format, separator=separator), output,
                                (model, data), out)
            return
        ds = read_conformed_within(data, clf.attributes_, clf.class_attribute_, limits,
                                   format=_csv_format(data, data_format, separator), separator=separator)
        import numpy as np

        header, rows, proba = _prediction_table(clf, ds)
        _write_predictions(output, header, rows, [str(c) for c in clf.classes_], ds.relation,
                           inputs=(model, data))
        if output is not None:
            msg = f"{output}: {len(rows)} predictions"
            if header[0] == "actual":
                known = ds.y >= 0
                acc = float(np.mean(np.argmax(proba[known], axis=1) == ds.y[known]))
                msg += f", accuracy {acc:.4f} on {int(known.sum())} rows with a known class"
            out.note(msg)


def _stream_predictions(clf, source, output: Path | None, inputs, out) -> None:
    """Predictions of every batch of ``source``, written batch by batch (Parquet, Arrow IPC or CSV)."""
    import numpy as np
    import pyarrow as pa

    from ..data.writers import batch_writer

    suffix = _prediction_suffix(output, True)
    labels = [str(c) for c in clf.classes_]
    from .._fs import replacing

    n = known = correct = 0
    writer = None
    with contextlib_nullcontext() if output is None else replacing(_output(output, *inputs)) as tmp:
        try:
            for table, y, proba in clf.predict_source(source):
                has_class = clf.class_attribute_.name in table.column_names
                pred = np.argmax(proba, axis=1)
                cols = {}
                if has_class:
                    cols["actual"] = pa.array([labels[v] if v >= 0 else None for v in y], pa.string())
                    k = y >= 0
                    known += int(k.sum())
                    correct += int((pred[k] == y[k]).sum())
                cols["predicted"] = pa.array(np.asarray(labels, dtype=object)[pred], pa.string())
                for j, c in enumerate(labels):
                    cols[f"p_{c}"] = pa.array(proba[:, j], pa.float64())
                batch = pa.table(cols)
                n += batch.num_rows
                if writer is None:
                    writer = batch_writer(tmp, suffix, batch.schema)
                writer.write_table(batch)
        finally:
            if writer is not None:
                writer.close()
    if output is not None:
        msg = f"{output}: {n} predictions"
        if known:
            msg += f", accuracy {correct / known:.4f} on {known} rows with a known class"
        out.note(msg)


def contextlib_nullcontext():
    from contextlib import nullcontext

    return nullcontext(None)


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def _parse_cv(cv: str | None, folds: int, repeats: int) -> tuple[int, int]:
    if cv is None:
        return repeats, folds
    parts = cv.lower().split("x")
    try:
        r, f = (int(p) for p in parts)
    except ValueError:
        raise ParameterError(f"--cv must look like 5x2 (repeats x folds), got {cv!r}") from None
    return r, f


@app.command()
def evaluate(
    data: Annotated[Path, typer.Argument(help="The data to cross-validate on: an ARFF, Arrow IPC/Feather, Parquet or CSV file.")],
    class_attribute: ClassOpt = None,
    structure: StructureList = _default("structure"),
    k: KList = str(_default("k")),
    members: MembersList = str(_default("n_members")),
    estimator: EstimatorList = _default("estimator"),
    iterations: IterationsList = "auto",
    burn_in: BurnInOpt = None,
    tying: TyingList = _default("tying"),
    m: MOpt = _default("m"),
    seed: FoldSeedOpt = 0,
    threads: ThreadsOpt = None,
    discretization: DiscretizationList = _default("discretization"),
    categorical: CategoricalOpt = None,
    keep_columns: KeepColumnsOpt = None,
    folds: Annotated[int, typer.Option("--folds", "-f", help="Number of stratified folds.")] = 2,
    repeats: Annotated[int, typer.Option("--repeats", "-r", help="How many times the folds are redrawn (seed, seed + 1, ...).")] = 1,
    cv: Annotated[
        Optional[str],
        typer.Option("--cv", help="Repeats x folds in one go, e.g. 5x2 for the paper's protocol; overrides --folds and --repeats.",
                     show_default="--repeats x --folds"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON instead of a table.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the results as CSV instead of a table.")] = False,
    class_values: ClassValuesOpt = None,
    data_format: FormatOpt = None,
    separator: SeparatorOpt = None,
    max_input_mb: MaxInputOpt = None,
    max_cardinality: MaxCardinalityOpt = None,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Cross-validate one or more configurations on DATA; print RMSE, 0-1 loss, log-loss and times.

    Training options take comma lists, e.g. --structure nb,kdb -k 1,3 --estimator hdp,m-estimate;
    discretisation is learnt inside each training fold.
    """
    out = _Out(quiet, verbose)
    with _errors():
        from ..model import BayesNetClassifier
        from ..model.evaluation import cross_validate, warm_up

        if as_json and as_csv:
            raise ParameterError("--json and --csv cannot be used together")
        n_repeats, n_folds = _parse_cv(cv, folds, repeats)
        if n_folds < 2:
            raise ParameterError(f"--folds must be >= 2, got {n_folds!r}")
        if n_repeats < 1:
            raise ParameterError(f"--repeats must be >= 1, got {n_repeats!r}")
        configs = configurations(structure=structure, k=k, members=members, estimator=estimator, iterations=iterations,
                                 burn_in=burn_in, tying=tying, m=m, seed=seed, threads=threads,
                                 discretization=discretization)
        keep_columns = categorical_option(keep_columns, "--keep-columns")
        if keep_columns is not None:
            for params in configs:
                params["keep_columns"] = keep_columns
        limits = _limits(max_input_mb, max_cardinality)
        results = []
        warm_seconds = 0.0
        with out.progress() as bar, _warnings_once(hold_fit_logs=False) as caught:
            line = _Phases(bar)
            line.phase(f"reading {data}")
            ds = _read(data, class_attribute, data_format, class_values, categorical_option(categorical), limits,
                       configs, separator_option(separator))
            known = int((ds.y >= 0).sum())
            if n_folds > known:
                raise ParameterError(f"--folds {n_folds} is more than the {known} rows with a known class in {data}; "
                                     f"give at most {known} folds")
            total = len(configs) * n_folds * n_repeats
            overall = bar.add_task("cross-validation", total=total) if bar else None
            for params in configs:
                fits = [0]

                def make(params=params, fits=fits):
                    if bar is not None:
                        if fits[0]:
                            bar.advance(overall)
                        fits[0] += 1
                        bar.update(overall, description=f"{_describe(params)} fold {fits[0]}/{n_folds * n_repeats}")
                        line.phase(_fit_phase(params))
                    return BayesNetClassifier(**params)

                with _option_names(), _fitting(limits, ds, configs):
                    line.phase(f"{_describe(params)}: compiling or loading its kernels (not timed)")
                    warm_seconds += warm_up(lambda params=params: BayesNetClassifier(**params), ds, seed=seed)
                    res = cross_validate(make, ds, n_folds=n_folds, repeats=n_repeats, seed=seed,
                                         progress=line.sampling(params))
                if bar is not None:
                    bar.advance(overall)
                results.append((params, res))
                log.info("%s: RMSE %.4f", _describe(params), res.rmse)
        _print_warnings([], caught)
        _print_results(results, ds, n_folds, n_repeats, as_json, as_csv, warm_seconds)


_RESULT_COLUMNS = ("structure", "k", "n_members", "estimator", "iterations", "tying", "discretization",
                   "rmse", "zero_one_loss", "log_loss", "train_seconds", "test_seconds")


def _result_rows(results) -> list[dict]:
    rows = []
    for params, res in results:
        hdp = params["estimator"] == "hdp"
        rows.append({
            "structure": params["structure"],
            "k": params["k"] if params["structure"] in ("kdb", "skdb", "eskdb") else None,
            "n_members": params["n_members"] if params["structure"] == "eskdb" else None,
            "estimator": params["estimator"],
            "iterations": (params["iterations"] or "auto") if hdp else None,
            "tying": params["tying"] if hdp else None,
            "discretization": params["discretization"],
            "rmse": res.rmse, "zero_one_loss": res.zero_one, "log_loss": res.log_loss,
            "train_seconds": res.train_seconds, "test_seconds": res.test_seconds,
        })
    return rows


def _finite(obj):
    """JSON has no NaN or infinity: such floats become null."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _best_line(names: list[str], rows: list[dict]) -> str:
    """The closing line of the table: which configuration has the lowest value of each metric."""
    if len(rows) < 2:
        return ""
    best: dict[str, list[str]] = {}
    for key, label in (("rmse", "RMSE"), ("zero_one_loss", "0-1 loss"), ("log_loss", "log-loss")):
        values = [r[key] for r in rows]
        finite = [v for v in values if math.isfinite(v)]
        if not finite:
            continue
        low = min(finite)
        winners = [i for i, v in enumerate(values) if v == low]
        if len(winners) > 1:  # a tie names nobody
            continue
        best.setdefault(names[winners[0]] + " " + rows[winners[0]]["estimator"], []).append(label)

    def words(metrics):
        return metrics[0] if len(metrics) == 1 else ", ".join(metrics[:-1]) + " and " + metrics[-1]

    return "; ".join(f"lowest {words(metrics)}: {name}" for name, metrics in best.items())


def _print_results(results, ds, n_folds: int, n_repeats: int, as_json: bool, as_csv: bool,
                   warm_seconds: float = 0.0) -> None:
    rows = _result_rows(results)
    if as_json:
        doc = {"data": str(ds.source), "rows": ds.n_rows, "folds": n_folds, "repeats": n_repeats,
               "untimed_warm_up_seconds": warm_seconds,
               "results": [_finite({**r, "per_fold": [dict(zip(("rmse", "zero_one_loss", "log_loss"), f))
                                                      for f in res.folds]})
                           for r, (_, res) in zip(rows, results)]}
        typer.echo(json.dumps(doc, indent=2))
        return
    if as_csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=_RESULT_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
        sys.stdout.write(buf.getvalue())
        return
    from rich.console import Console
    from rich.table import Table

    title = (f"{Path(str(ds.source)).name}: {ds.n_rows} rows, "
             + (f"{n_repeats}x{n_folds}" if n_repeats > 1 else f"{n_folds}-fold") + " cross-validation")
    table = Table(title=title)
    for name, justify in (("model", "left"), ("estimator", "left"), ("RMSE", "right"), ("0-1 loss", "right"),
                          ("log-loss", "right"), ("train s", "right"), ("test s", "right")):
        table.add_column(name, justify=justify)
    names = []
    for (params, _), r in zip(results, rows):
        est = r["estimator"] + (f" ({r['iterations']} it.)" if r["iterations"] else "")
        used = usable_k(params["structure"], params["k"], ds.n_attributes)  # the k used, and the one asked if more
        name = structure_name(params["structure"], used)
        name += f" (k={params['k']})" if params["structure"] not in ("nb", "tan") and used < params["k"] else ""
        names.append(name)
        table.add_row(name, est, f"{r['rmse']:.4f}", f"{r['zero_one_loss']:.4f}",
                      f"{r['log_loss']:.4f}", f"{r['train_seconds']:.2f}", f"{r['test_seconds']:.2f}")
    n_fits = n_folds * n_repeats
    table.caption = (f"Lower is better in every column. Times are summed over the {n_fits} folds "
                     f"(training: discretisation, structure and estimation); compiling or loading numba's kernels "
                     f"took {warm_seconds:.2f} s before the folds and is not counted.")
    console = Console(width=max(100, shutil.get_terminal_size().columns))
    console.print(table)
    best = _best_line(names, rows)
    if best:
        console.print(best[0].upper() + best[1:] + ".", highlight=False)


# ------------------------------------------------------------------------------------------
# info and show
# ------------------------------------------------------------------------------------------
@app.command()
def info(
    model: Annotated[Path, typer.Argument(help="A model file written by hdp-bnc train.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the model's metadata document as JSON.")] = False,
) -> None:
    """Describe a model file: structure, tree sizes, concentrations, settings and versions."""
    with _errors():
        from ..model.modelfile import read_model  # reads and checks it all, without numba

        contents = read_model(model)
        if as_json:
            typer.echo(json.dumps({"model": contents.doc, "training": contents.training}, indent=2))
            return
        from ..model.render import info_text

        typer.echo(info_text(model, contents))


@app.command()
def show(
    model: Annotated[Path, typer.Argument(help="A model file written by hdp-bnc train.")],
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Write to this file instead of stdout: .dot as text, .png, .svg or .pdf through Graphviz's dot.",
                     show_default="DOT on stdout"),
    ] = None,
    member: Annotated[Optional[int], typer.Option(
        "--member", metavar="N", help="Draw member N (0, 1, ...) of an ensemble instead of what its members share.",
        show_default="an ensemble: how many members have each edge")] = None,
) -> None:
    """Print the network as Graphviz DOT, or draw it to a picture with -o net.png or net.svg."""
    with _errors():
        from ..model.modelfile import read_model  # the file read and checked, without numba

        from ..model.render import network_dot, shared_dot

        fmt = output.suffix.lower().lstrip(".") if output is not None else None
        if output is not None:  # before the work: a format, a place or a file it cannot write is refused at once
            target = _output(output, model)
            if fmt not in ("dot", "gv", "png", "svg", "pdf"):
                raise ParameterError(f"-o must end in .dot, .gv, .png, .svg or .pdf, got {output.name!r}")
            output = target
        contents = read_model(model)
        nets, cls = contents.networks, contents.class_attribute.name
        if member is not None and not 0 <= member < len(nets):
            raise ParameterError(f"--member {member} is out of range: {model} has "
                                 + (f"{len(nets)} members, give 0 to {len(nets) - 1}" if len(nets) > 1
                                    else "one network, give 0 or leave --member out"))
        if len(nets) == 1 or member is not None:
            net = nets[member or 0]
            title = f"member {member} of the ESKDB ensemble of {len(nets)} members" if len(nets) > 1 else None
            dot_text = network_dot(net.attributes, net.structure, cls, title,
                                   "hdp-bnc show without --member draws what the members share")
        else:  # an ensemble: what its members share
            dot_text = shared_dot(nets, cls)
        if output is None:
            sys.stdout.write(dot_text)
            return
        if fmt in ("dot", "gv"):
            from .._fs import replacing

            with replacing(output) as tmp:
                tmp.write_text(dot_text, encoding="utf-8")
            return
        exe = shutil.which("dot")
        if exe is None:
            raise HDPError(
                f"drawing {output.name} needs Graphviz's 'dot' program, which is not installed; "
                f"install Graphviz or write DOT text with -o {output.with_suffix('.dot').name}"
            )
        done = subprocess.run([exe, f"-T{fmt}", "-o", str(output)], input=dot_text.encode("utf-8"),
                              capture_output=True, check=False)
        if done.returncode != 0:
            raise HDPError(f"dot failed on {output.name}: {done.stderr.decode(errors='replace').strip()}")


def _mount_daemon() -> None:
    """``hdp-bnc daemon ...``: the training daemon's own sub-app (hdp_plugin.cli.daemon)."""
    from .daemon import app as daemon_app

    app.add_typer(daemon_app, name="daemon",
                  help="The training daemon: serve a spool directory, submit jobs to it, watch it, stop it.")


_mount_daemon()


def main() -> None:
    """Entry point of the ``hdp-bnc`` console script and of ``python -m hdp_plugin``."""
    try:
        app(prog_name="hdp-bnc")
    except BrokenPipeError:  # e.g. `hdp-bnc predict ... | head`: stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == 0:
            raise
        # An error exit soon after start can race native thread pools (pyarrow's) still starting up,
        # and their C++ destructors then abort the process ("terminate called without an active
        # exception", exit 134) after the error line was printed. Nothing is left to clean up at this
        # point: flush and leave without running the interpreter's and C++'s exit handlers.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
