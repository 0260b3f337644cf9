"""Batches of a :class:`~hdp_plugin.data.stream.BatchSource` coded on a model's discretised
attributes: what every pass of a streamed fit, and streamed prediction, reads."""

from __future__ import annotations

import pyarrow as pa

from ..data.arrow import table_columns
from ..data.conform import conform_columns
from ..data.dataset import Attribute, Dataset
from .discretizer import apply_cut_points


def batch_codes(table: pa.Table, attributes: list[Attribute], class_attribute: Attribute, source: str,
                *, training: bool = True) -> Dataset:
    """One batch on the model's (discretised) attributes: a Dataset of codes (rows with a missing
    class dropped when ``training``)."""
    ds = conform_columns(table_columns(table, source), attributes, class_attribute, source=source)
    ds = apply_cut_points(ds, attributes)
    if training:
        keep = ds.y >= 0
        if not keep.all():
            ds = ds.take(keep)
    return ds
