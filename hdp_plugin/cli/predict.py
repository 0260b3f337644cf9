"""``hdp-bnc predict``: the predicted class and every class's probability for each row of a data file,
on stdout or in a file whose suffix picks the format, whole or batch by batch."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ..errors import ParameterError
from ..params import BY_NAME as PARAM
from .common import cli_errors as _errors
from .files import _csv_format, _limits, _open_source, _output, contextlib_nullcontext, force_option, predictions_kind
from .options import (DecimalOpt, FormatOpt, MaxCardinalityOpt, MaxInputOpt, SeparatorOpt, decimal_option,
                      separator_option)
from .progress import Quiet, Verbose, _Out, _print_warnings, _warnings_once

if TYPE_CHECKING:  # numpy is imported where it is used: --help stays light
    import numpy as np

ForceOpt = force_option("predictions in the format of its suffix")


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


def _prediction_suffix(path: Path | None, streamed: bool) -> str:
    """The suffix of predict's ``-o`` (``.csv`` for stdout), which picks the format; ParameterError for
    one with no format (for predictions written batch by batch when ``streamed``)."""
    from ..data.writers import BATCH_SUFFIXES, PREDICTION_SUFFIXES

    suffix = path.suffix.lower() if path is not None else ".csv"
    if streamed and suffix not in BATCH_SUFFIXES:
        raise ParameterError(f"-o must end in {_one_of(BATCH_SUFFIXES)} when DATA is a directory or glob or "
                             f"--stream is given, got {path.name!r}")
    if suffix not in PREDICTION_SUFFIXES:
        raise ParameterError(f"-o must end in {_one_of(PREDICTION_SUFFIXES)} (the format of the predictions), "
                             f"got {path.name!r}")
    return suffix


def _one_of(suffixes) -> str:
    """``.a, .b or .c``."""
    return ", ".join(suffixes[:-1]) + " or " + suffixes[-1]


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
    decimal: DecimalOpt = None,
    max_input_mb: MaxInputOpt = None,
    max_cardinality: MaxCardinalityOpt = None,
    stream: Annotated[bool, typer.Option("--stream", help="Read DATA in batches even if it is one file (a directory "
                                         "or glob always is) and write the predictions batch by batch: memory "
                                         "bounded by the model and a batch, not the rows; -o must then be .parquet, "
                                         ".arrow, .feather or .csv.")] = False,
    force: ForceOpt = False,
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
        decimal = decimal_option(decimal)
        limits = _limits(max_input_mb, max_cardinality)
        from ..data.stream import is_batch_path

        streamed = stream or is_batch_path(data)
        if output is not None:  # before the work: a format, a place or a file it cannot write is refused at once
            _output(output, model, data, kind=predictions_kind(output), force=force)
            _prediction_suffix(output, streamed)
        clf = load_model(model)
        from ..model.ensemble import used_attributes

        if streamed:
            if max_input_mb is not None or max_cardinality is not None:
                raise ParameterError("--max-input-mb and --max-cardinality apply to data read whole, not in "
                                     "batches (a directory, a glob or --stream: read in bounded memory)")
            with _warnings_once(hold_fit_logs=False) as caught:
                _stream_predictions(clf, _open_source(data, None, data_format, separator=separator,
                                                      decimal=decimal), output, (model, data), out)
            _print_warnings([], caught)
            return
        with _warnings_once(hold_fit_logs=False) as caught:
            ds = read_conformed_within(data, clf.attributes_, clf.class_attribute_, limits,
                                       format=_csv_format(data, data_format, separator, decimal),
                                       separator=separator, decimal=decimal, used=used_attributes(clf))
            header, rows, proba = _prediction_table(clf, ds)
        _print_warnings([], caught)
        import numpy as np

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

