"""Data file formats, told by extension (no reader imported: ``hdp-bnc daemon submit`` copies files)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ParameterError

__all__ = ["FORMATS", "format_of"]

#: format name -> file extensions that select it (a trailing ``.gz`` is allowed for ARFF and CSV)
FORMATS = {
    "arff": (".arff",),
    "arrow": (".arrow", ".feather", ".ipc", ".arrows"),
    "parquet": (".parquet", ".pq"),
    "csv": (".csv",),
}


def format_of(path: str | Path, format: str | None = None) -> str:
    """The format of ``path``: ``format`` if given (checked), else the one its extension names."""
    if format is not None:
        fmt = format.lower().lstrip(".")
        fmt = {"feather": "arrow", "ipc": "arrow"}.get(fmt, fmt)
        if fmt not in FORMATS:
            raise ParameterError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        return fmt
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
        allowed = ("arff", "csv")
    else:
        allowed = tuple(FORMATS)
    ext = suffixes[-1] if suffixes else ""
    for fmt in allowed:
        if ext in FORMATS[fmt]:
            return fmt
    raise ParameterError(
        f"cannot tell the format of {path} from its extension {ext or '(none)'!r}; "
        f"name it .arff, .arrow/.feather/.ipc, .parquet or .csv, or pass format= one of {', '.join(FORMATS)}"
    )
