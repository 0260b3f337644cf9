"""The data stage: every input format read into one :class:`Dataset` of integer codes.

Readers
    :func:`read_dataset` (ARFF, Arrow IPC/Feather, Parquet, CSV, by extension), :func:`from_arrow`,
    :func:`from_pandas`, :func:`from_arrays`.
New data on a trained model
    :func:`conform`, :func:`conform_table`, :func:`read_conformed`.
Checks before training
    :func:`check_trainable`.
"""

from .._lazy import lazy_names
from .arrays import from_arrays
from .conform import check_trainable, conform
from .dataset import Attribute, Dataset, encode_codes, smallest_code_dtype

#: the readers are loaded on first use (PEP 562): they import pyarrow, which the dataset types and
#: the numpy-only modules above do not need
_LAZY = {
    "read_arff": ".arff",
    "from_arrow": ".arrow",
    "from_pandas": ".arrow",
    "to_arrow": ".arrow",
    "BatchSource": ".stream",
    "open_batches": ".stream",
    "FORMATS": ".formats",
    "conform_table": ".readers",
    "features_from_table": ".readers",
    "read_conformed": ".readers",
    "read_dataset": ".readers",
}

__all__ = [
    "Attribute",
    "BatchSource",
    "Dataset",
    "FORMATS",
    "check_trainable",
    "conform",
    "conform_table",
    "features_from_table",
    "encode_codes",
    "from_arrays",
    "from_arrow",
    "from_pandas",
    "open_batches",
    "read_arff",
    "read_conformed",
    "read_dataset",
    "smallest_code_dtype",
    "to_arrow",
]

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
