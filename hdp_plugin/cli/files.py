"""The files the commands read and write: the data's format and reading limits, the data read whole
or in batches, the check of an ``-o`` file, and the names of the options a fit's errors are about."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

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


def _open_source(data: Path, class_attribute, fmt, sample=None, separator: str | None = None):
    from ..data.stream import DEFAULT_SAMPLE_ROWS, open_batches

    try:
        return open_batches(data, class_attribute=class_attribute, format=fmt,
                            sample_rows=DEFAULT_SAMPLE_ROWS if sample is None else sample, separator=separator)
    except ParameterError as exc:
        if separator is not None and str(exc).startswith("a separator applies"):
            raise ParameterError("--separator" + str(exc)[len("a separator"):]) from None
        raise


def _output(path: Path, *inputs: Path) -> Path:
    """The file ``-o`` writes (a link is written through); ParameterError for a device, FIFO or
    directory, for one of the command's own input files, or in a directory that is missing or takes
    no new file. Commands check it before reading their data."""
    from .._fs import check_output

    target, problem = check_output(path, inputs, directory=True)
    if problem:
        raise ParameterError(f"-o {path}: {problem}; give another file name")
    return target


def contextlib_nullcontext():
    from contextlib import nullcontext

    return nullcontext(None)

