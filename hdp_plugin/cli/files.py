"""The files the commands read and write: the data's format and reading limits, the data read whole
or in batches, the check of an ``-o`` file (with the kinds of existing file each command replaces
without ``--force``), and the names of the options a fit's errors are about."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Callable

import typer

from ..errors import ParameterError
from .options import split


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


def _csv_format(path: Path, fmt: str | None, separator: str | None, decimal: str | None = None) -> str:
    """:func:`_format`, and ``--separator`` and ``--decimal`` given only for a CSV file."""
    fmt = _format(path, fmt)
    for option, value in (("--separator", separator), ("--decimal", decimal)):
        if value is not None and fmt != "csv":
            raise ParameterError(f"{option} applies to CSV files, and {path} is read as {fmt}")
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
          categorical: list[str] | None = None, limits=None, configs=(), separator: str | None = None,
          decimal: str | None = None):
    from ..data.readers import read_within

    from ..runtime.threads import members_at_once

    eskdb = [c for c in configs if c["structure"] == "eskdb"]
    at_once = max([members_at_once(c) for c in configs] + [1])  # ESKDB members are built on threads at once
    ds = read_within(path, limits if limits is not None else _limits(None, None), class_attribute=class_attribute,
                     format=_csv_format(path, fmt, separator, decimal), structure="eskdb" if eskdb else None,
                     members_at_once=at_once, separator=separator, decimal=decimal)
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


def _open_source(data: Path, class_attribute, fmt, sample=None, separator: str | None = None,
                 decimal: str | None = None):
    from ..data.stream import DEFAULT_SAMPLE_ROWS, open_batches

    try:
        return open_batches(data, class_attribute=class_attribute, format=fmt,
                            sample_rows=DEFAULT_SAMPLE_ROWS if sample is None else sample, separator=separator,
                            decimal=decimal)
    except ParameterError as exc:
        for what in ("separator", "decimal"):
            if str(exc).startswith(f"a {what} applies"):
                raise ParameterError(f"--{what}" + str(exc)[len(f"a {what}"):]) from None
        raise


def _output(path: Path, *inputs: Path, kind: tuple[str, Callable[[Path], bool]] | None = None,
            force: bool = False) -> Path:
    """The file ``-o`` writes (a link is written through); ParameterError for a device, FIFO or
    directory, for one of the command's own input files, or in a directory that is missing or takes
    no new file. With ``kind`` (what the command writes, and the test that tells such a file), also
    for an existing file of another kind unless ``force`` (``--force``): -o replaces the command's own
    earlier output, never a data file by mistake. Commands check it before reading their data."""
    from .._fs import check_output

    target, problem = check_output(path, inputs, directory=True)
    if problem:
        raise ParameterError(f"-o {path}: {problem}; give another file name")
    if kind is not None and not force and os.path.exists(target) and not kind[1](target):
        raise ParameterError(f"-o {path}: the file exists and is not {kind[0]}; give another file name, or "
                             f"--force to replace it")
    return target


def force_option(what: str):
    """``--force``: replace an existing -o file that is not ``what``."""
    return Annotated[bool, typer.Option("--force", help=f"Replace an existing -o file that is not {what} (one "
                                                        f"that is, is replaced without it).")]


def _model_file(path: Path) -> bool:
    from ..model.modelfile import is_model_file

    return is_model_file(path)


#: what train's -o replaces without --force
MODEL_KIND = ("an hdp-bnc model file", _model_file)


def predictions_kind(path: Path) -> tuple[str, Callable[[Path], bool]] | None:
    """What predict's -o ``path`` replaces without --force: predictions in the format of its suffix (None
    for a suffix with no format, which predict refuses)."""
    from ..data.writers import PREDICTION_SUFFIXES, is_predictions_file

    suffix = path.suffix.lower()
    if suffix not in PREDICTION_SUFFIXES:
        return None
    return ("a predictions file", lambda target: is_predictions_file(target, suffix))


#: the first bytes of the pictures show writes, by format
_PICTURE_MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


def _drawing(fmt: str, path: Path) -> bool:
    """Whether ``path`` holds what show writes in the format ``fmt``: DOT text of a directed graph, an
    SVG file Graphviz wrote, a PNG or a PDF file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if fmt in ("dot", "gv"):
        return head.lstrip().startswith(b"digraph")
    if fmt == "svg":
        return b"<svg" in head and b"Generated by graphviz" in head
    return head.startswith(_PICTURE_MAGIC[fmt])


def drawing_kind(fmt: str | None) -> tuple[str, Callable[[Path], bool]] | None:
    """What show's -o replaces without --force: a drawing in the format ``fmt`` (None for a format show
    does not write, which it refuses)."""
    if fmt in ("dot", "gv"):
        return ("DOT text", lambda path: _drawing(fmt, path))
    if fmt == "svg":
        return ("an SVG picture of Graphviz", lambda path: _drawing(fmt, path))
    if fmt in _PICTURE_MAGIC:
        return (f"a {fmt.upper()} picture", lambda path: _drawing(fmt, path))
    return None


def contextlib_nullcontext():
    from contextlib import nullcontext

    return nullcontext(None)

