"""Writers of prediction tables: CSV, ARFF, Arrow IPC/Feather and Parquet, whole or batch by batch.

The readers' counterparts (:mod:`.readers`); ``hdp-bnc predict`` chooses the file and the format, these
write the bytes. pyarrow is imported only by the formats that need it.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

#: the suffixes :func:`write_predictions` writes
PREDICTION_SUFFIXES = (".csv", ".arrow", ".feather", ".ipc", ".parquet", ".arff")
#: the suffixes :func:`batch_writer` writes
BATCH_SUFFIXES = (".parquet", ".arrow", ".feather", ".ipc", ".csv")


def arff_quote(text: str) -> str:
    """An ARFF value or name in single quotes, so that any text (``{``, ``?``, commas, empty) reads back."""
    return "'" + (text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
                  .replace("\t", "\\t")) + "'"


def arff_text(relation: str, header, rows, class_labels, n_nominal: int) -> str:
    """Predictions as ARFF: the first ``n_nominal`` columns nominal over the class labels, the others numeric."""
    labels = ",".join(arff_quote(c) for c in class_labels)
    lines = [f"@relation {arff_quote(relation)}", ""]
    lines += [f"@attribute {arff_quote(n)} {{{labels}}}" for n in header[:n_nominal]]
    lines += [f"@attribute {arff_quote(n)} numeric" for n in header[n_nominal:]]
    lines += ["", "@data"]
    for r in rows:
        lines.append(",".join("?" if v is None else (repr(v) if isinstance(v, float) else arff_quote(str(v)))
                              for v in r))
    return "\n".join(lines) + "\n"


def write_predictions(path: Path | None, suffix: str, header, rows, class_labels, relation: str) -> None:
    """A table of predictions (``header``, then ``rows``: the actual class if known, the predicted class and
    every class's probability) written to ``path`` in the format of ``suffix`` (.arrow, .feather, .ipc,
    .parquet, .arff, else CSV); CSV on stdout when ``path`` is None."""
    if suffix in (".arrow", ".feather", ".ipc", ".parquet"):
        import pyarrow as pa

        cols = {}
        for j, name in enumerate(header):
            vals = [r[j] for r in rows]
            cols[name] = pa.array(vals, type=pa.string() if j < len(header) - len(class_labels) else pa.float64())
        table = pa.table(cols)
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, path)
        else:
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        return
    if suffix == ".arff":
        n_nominal = len(header) - len(class_labels)
        text = arff_text(f"{relation}-predictions", header, rows, class_labels, n_nominal)
        path.write_text(text, encoding="utf-8")
        return
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
    if path is None:
        sys.stdout.write(buf.getvalue())
    else:
        path.write_text(buf.getvalue(), encoding="utf-8")


def prediction_columns(names) -> bool:
    """Whether ``names`` are the columns of a prediction table: ``actual`` (if any), ``predicted``, then a
    ``p_<label>`` per class."""
    names = list(names)
    if names[:1] == ["actual"]:
        names = names[1:]
    return len(names) >= 2 and names[0] == "predicted" and all(n.startswith("p_") for n in names[1:])


#: how much of a text file :func:`is_predictions_file` reads to find its header
_HEAD_BYTES = 1 << 20


def is_predictions_file(path, suffix: str) -> bool:
    """Whether ``path`` holds a prediction table as these writers write it in the format of ``suffix``:
    the columns of :func:`prediction_columns` (CSV, Arrow IPC, Parquet), or the ARFF relation named
    ``...-predictions`` whose first attribute is ``actual`` or ``predicted``. Reads the header, the
    schema or the footer, never the rows."""
    if suffix in (".arrow", ".feather", ".ipc", ".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        magic = b"PAR1" if suffix == ".parquet" else b"ARROW1"
        try:
            with open(path, "rb") as fh:
                if fh.read(len(magic)) != magic:
                    return False
            if suffix == ".parquet":
                return prediction_columns(pq.read_schema(str(path)).names)
            with pa.memory_map(str(path)) as source:
                return prediction_columns(pa.ipc.open_file(source).schema.names)
        except (OSError, ValueError, pa.ArrowException):
            return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    if suffix == ".arff":
        lines = [line.strip() for line in head.splitlines() if line.strip()]
        return (len(lines) >= 2 and lines[0].startswith("@relation ") and lines[0].endswith("-predictions'")
                and lines[1].startswith(("@attribute 'actual' ", "@attribute 'predicted' ")))
    try:
        return prediction_columns(next(csv.reader(head.splitlines()[:1]), []))
    except csv.Error:
        return False


class CsvBatches:
    """CSV predictions batch by batch, written as :func:`write_predictions` writes CSV (stdout when
    ``path`` is None)."""

    def __init__(self, path, schema):
        self._f = sys.stdout if path is None else open(path, "w", encoding="utf-8", newline="")
        self._w = csv.writer(self._f, lineterminator="\n")
        self._w.writerow(schema.names)

    def write_table(self, table):
        cols = [c.to_pylist() for c in table.columns]
        for r in zip(*cols):
            self._w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])

    def close(self):
        if self._f is sys.stdout:
            self._f.flush()
        else:
            self._f.close()


def batch_writer(path, suffix: str, schema):
    """A writer of prediction tables of ``schema``, batch by batch (``write_table``, ``close``): Parquet,
    CSV or Arrow IPC by ``suffix``."""
    import pyarrow as pa

    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetWriter(str(path), schema)
    if suffix == ".csv":
        return CsvBatches(path, schema)
    return pa.ipc.new_file(str(path), schema)
