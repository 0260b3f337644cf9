"""The resource limits of reading and training, shared by ``hdp-bnc`` and the daemon.

* ``max_input_bytes`` (``--max-input-mb``): the data file, and its data once decompressed (gzip ARFF
  and CSV, compressed Arrow buffers, Parquet row groups), each checked before it is decompressed;
* ``max_cardinality`` (``--max-cardinality``): values of a nominal attribute or the class, checked
  while an ARFF header is parsed (before its labels are held) and right after other formats are read;
* an ARFF header's declarations: its attributes and their labels, all together, at
  :data:`~hdp_plugin.config.HEADER_BYTES_PER_ATTRIBUTE` bytes an attribute and
  :data:`~hdp_plugin.config.HEADER_BYTES_PER_LABEL` a label plus their text, may take at most the
  working memory below (:func:`header_memory_limit`), counted while the header is parsed;
* the working memory: training holds about :data:`~hdp_plugin.config.WORKING_BYTES_PER_VALUE` bytes
  per value (rows x columns) of its data, and as many more per ESKDB member built at once; the
  estimate is refused (before the data is decoded into codes) above
  :data:`~hdp_plugin.config.WORKING_MEMORY_FACTOR` times ``max_input_bytes``, and what it leaves bounds
  the pairwise statistics of structure learning (:meth:`Limits.fitting`), refused before they are allocated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import config
from ..errors import TooLargeError

__all__ = ["Limits", "check_cardinality", "check_file_size", "check_working_memory", "decompressed_limit",
           "header_memory_limit", "working_bytes"]


@dataclass(frozen=True)
class Limits:
    """Resource limits of one reader (None: the library's defaults, as :func:`read_dataset` has them)."""

    max_input_bytes: int | None = None
    max_cardinality: int | None = None
    max_cells: int | None = None

    @classmethod
    def of_options(cls, max_input_mb: float | None, max_cardinality: int | None) -> "Limits":
        """The command line's limits: ``--max-input-mb`` (default 1024) and ``--max-cardinality``."""
        mb = config.DEFAULT_MAX_INPUT_BYTES / 2**20 if max_input_mb is None else max_input_mb
        return cls(int(mb * 2**20), config.DEFAULT_MAX_CARDINALITY if max_cardinality is None else max_cardinality)

    @property
    def working_bytes(self) -> int | None:
        """The working memory allowed: WORKING_MEMORY_FACTOR times ``max_input_bytes`` (None: unbounded)."""
        return None if self.max_input_bytes is None else config.WORKING_MEMORY_FACTOR * self.max_input_bytes

    def fitting(self, n_rows: int, n_columns: int, structure: str | None = None, members_at_once: int = 1):
        """A context in which a fit on ``n_rows x n_columns`` values builds its pairwise statistics within
        the working memory that the data's share (:func:`working_bytes`) leaves (:mod:`hdp_plugin.runtime.memory`)."""
        from ..runtime import memory

        budget = self.working_bytes
        if budget is None:
            return memory.bounded(None, "")
        data = working_bytes(n_rows * n_columns, structure, members_at_once)
        share = _mib(data) if data >= 2**20 else f"{data / 2**10:,.0f} KiB"
        return memory.bounded(budget - data, f"{config.WORKING_MEMORY_FACTOR} x --max-input-mb less the "
                                              f"{share} of the data's working memory")


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def check_file_size(path: Path, max_bytes: int | None) -> None:
    """:class:`TooLargeError` if the file itself is larger than ``max_bytes`` (None: no limit)."""
    if max_bytes is None:
        return
    size = path.stat().st_size
    if size > max_bytes:
        raise TooLargeError(f"{path}: has {size:,} bytes, more than the limit of {max_bytes:,} (--max-input-mb)")


def decompressed_limit(size: int, max_bytes: int | None) -> tuple[int, str]:
    """The most bytes a file of ``size`` bytes may decompress to, and what to say when it does."""
    if max_bytes is None:
        return (max(config.MAX_DECODED_BYTES_FLOOR, config.MAX_DECODED_RATIO * size),
                "it is corrupt, or a decompression bomb")
    return max_bytes, "--max-input-mb bounds the data after decompression too"


def header_memory_limit(max_bytes: int | None) -> tuple[int, str]:
    """The most memory an ARFF header's declarations may take, and the limit's name for a message:
    WORKING_MEMORY_FACTOR times ``max_bytes``, or times ``--max-input-mb``'s default where none is given."""
    if max_bytes is None:
        return (config.WORKING_MEMORY_FACTOR * config.DEFAULT_MAX_INPUT_BYTES,
                f"{config.WORKING_MEMORY_FACTOR} x the default of --max-input-mb")
    return config.WORKING_MEMORY_FACTOR * max_bytes, f"{config.WORKING_MEMORY_FACTOR} x --max-input-mb"


def check_cardinality(name: str, n_values: int, limit: int | None, source: str, where: str = "") -> None:
    """:class:`TooLargeError` if a nominal attribute (or the class) has more than ``limit`` values."""
    if limit is not None and n_values > limit:
        if where:  # the header is still being parsed: only that there are too many is known
            raise TooLargeError(f"{source}: {where}attribute {name!r} declares more than {limit:,} values, the "
                                "limit (--max-cardinality)")
        raise TooLargeError(f"{source}: attribute {name!r} has {n_values:,} values, more than the limit of {limit:,} "
                            "(--max-cardinality)")


def working_bytes(n_values: int, structure: str | None = None, members_at_once: int = 1) -> int:
    """The working memory training is estimated to need for ``n_values`` values (rows x columns)."""
    per_value = config.WORKING_BYTES_PER_VALUE
    if structure == "eskdb":
        per_value += config.WORKING_BYTES_PER_VALUE * max(1, members_at_once)
    return int(n_values) * per_value


def check_working_memory(n_rows: int, n_columns: int, limits: Limits, source: str, structure: str | None = None,
                         members_at_once: int = 1, purpose: str = "train on") -> None:
    """:class:`TooLargeError` if training on ``n_rows x n_columns`` values (or the ``purpose`` named,
    such as ``"predict"``) would need more working memory than ``limits`` allow (see the module
    docstring)."""
    budget = limits.working_bytes
    if budget is None:
        return
    need = working_bytes(n_rows * n_columns, structure, members_at_once)
    if need > budget:
        each = (f", {members_at_once} ESKDB members built at once" if structure == "eskdb" and members_at_once > 1
                else "")
        raise TooLargeError(
            f"{source}: {n_rows:,} rows x {n_columns:,} columns would need about {_mib(need)} of working memory "
            f"to {purpose}{each}, more than the limit of {_mib(budget)} ({config.WORKING_MEMORY_FACTOR} x "
            f"--max-input-mb); use fewer rows or columns, or raise --max-input-mb")


def check_labels(attributes, limit: int | None, source: str) -> None:
    """:func:`check_cardinality` for every nominal attribute (the class included) of a reading."""
    if limit is None:
        return
    for a in attributes:
        if not a.numeric:
            check_cardinality(a.name, len(a.values), limit, source)
