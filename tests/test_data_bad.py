"""Bad input: one clear line, naming the file (and the line where there is one), as DataError."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hdp_plugin.data import check_trainable, read_dataset
from hdp_plugin.data.arff import read_arff
from hdp_plugin.errors import DataError, ParameterError

BAD = Path(__file__).parent / "data" / "bad"

CASES = [
    ("wrong_count.arff", r"line 8: expected 3 values, got 2"),
    ("undeclared_value.arff", r"line 10: value 'z' of attribute 'a' is not declared in the header"),
    ("bad_type.arff", r"line 3: unknown type 'numerc' of attribute 'b'"),
    ("unclosed_list.arff", r"line 2: value list of attribute 'a' has no closing '}'"),
    ("not_a_number.arff", r"line 7: value 'two' of numeric attribute 'b' is not a number"),
    ("unterminated_quote.arff", r"line 6: malformed value at column 1: .*unterminated quote"),
    ("newline_in_quotes.arff", r"line 5: malformed value at column 1: .*unterminated quote"),
    ("quote_across_lines.arff", r"line 5: malformed value at column 1: .*unterminated quote"),
    ("sparse_index.arff", r"line 7: sparse index 5 is out of range \(0 to 2\)"),
    ("duplicate_attribute.arff", r"line 3: attribute 'a' is declared twice \(first on line 2\)"),
    ("no_data_section.arff", r"no @data line; is this an ARFF file\?"),
    ("not_arff.arff", r"line 1: expected @relation, @attribute or @data, got 'a,b,class'"),
    ("late_attribute.arff", r"line 7: @attribute after @data"),
    ("numeric_class.arff", r"class attribute 'price' in .*numeric_class.arff is numeric; these classifiers need a nominal class"),
    ("latin1.arff", r"line 2 is not valid UTF-8 \(byte 0xe9\)"),
    ("binary.arff", r"is not a text file \(it contains NUL bytes\)"),
    ("empty.csv", r"is empty"),
    ("float_class.csv", r"class attribute 'class' in .*float_class.csv is numeric"),
    ("garbage.parquet", r"cannot read as Parquet"),
    ("garbage.arrow", r"cannot read as an Arrow IPC file or stream"),
]


def _one_line(e: DataError, name: str) -> str:
    msg = str(e)
    assert "\n" not in msg
    assert name in msg
    return msg


@pytest.mark.parametrize("name,pattern", CASES)
def test_bad_file_message(name, pattern):
    with pytest.raises(DataError, match=pattern) as info:
        read_dataset(BAD / name)
    _one_line(info.value, name)


@pytest.mark.parametrize("name", [n for n, _ in CASES if n.endswith(".arff")])
def test_exact_path_gives_the_same_message(name):
    with pytest.raises(DataError) as auto:
        read_dataset(BAD / name)
    with pytest.raises(DataError) as exact:
        read_arff(BAD / name, engine="exact")
    assert str(auto.value) == str(exact.value)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"nope.arff: no such file") as info:
        read_dataset(tmp_path / "nope.arff")
    _one_line(info.value, "nope.arff")
    with pytest.raises(DataError, match="is a directory"):
        read_dataset(tmp_path, format="csv")


def test_unknown_class_lists_the_names():
    with pytest.raises(DataError, match=r"class attribute 'kind' not found in .*wrong_count.arff; available: 'a', 'b', 'c'"):
        read_dataset(BAD / "wrong_count.arff", class_attribute="kind")


@pytest.mark.parametrize("name", ["no_rows.arff", "header_only.csv"])
def test_no_rows(name):
    ds = read_dataset(BAD / name)  # a header alone is a valid (empty) data set ...
    assert ds.n_rows == 0
    with pytest.raises(DataError, match=rf"{name}: no data rows"):
        check_trainable(ds)  # ... but nothing to train on


def test_one_observed_class():
    ds = read_dataset(BAD / "one_class.arff")
    with pytest.raises(DataError, match=r"class 'c' has only one observed value 'p' in .*one_class.arff"):
        check_trainable(ds)


def test_unknown_format_and_extension(tmp_path):
    p = tmp_path / "data.txt"
    p.write_text("a,b\n1,x\n")
    with pytest.raises(ParameterError, match=r"cannot tell the format of .*data.txt"):
        read_dataset(p)
    with pytest.raises(ParameterError, match=r"format must be one of arff, arrow, parquet, csv, got 'xls'"):
        read_dataset(p, format="xls")
    assert read_dataset(p, format="csv").n_rows == 1


def test_fast_path_locates_a_bad_value_in_a_large_file(tmp_path):
    """An undeclared value deep in a file the fast path reads is reported at its line, without
    re-reading the whole file slowly."""
    n = 20000
    rows = np.where(np.arange(n) % 2 == 0, "x,1.5,p", "y,2,q").tolist()
    rows[15000] = "x,3,r"
    lines = ["@relation r", "@attribute a {x,y}", "@attribute b numeric", "@attribute c {p,q}", "@data"]
    body = rows[:100] + ["% comment", "", "  % indented comment"] + rows[100:]
    p = tmp_path / "big.arff"
    p.write_text("\n".join(lines + body) + "\n")
    expected_line = len(lines) + 3 + 15000 + 1
    for engine in ("fast", "auto"):
        with pytest.raises(DataError, match=rf"line {expected_line}: value 'r' of attribute 'c' is not declared"):
            read_arff(p, engine=engine)


@pytest.mark.parametrize("batch_rows", [1, 2])
@pytest.mark.parametrize("name,pattern", [c for c in CASES if c[0].endswith((".arff", ".arrow"))])
def test_reading_in_batches_gives_the_same_message(name, pattern, batch_rows):
    """A file read in batches (the ARFF and Arrow readers of hdp_plugin.data.stream) fails as the whole
    read does: the same line, naming the file and the line."""
    from hdp_plugin.data import open_batches
    from hdp_plugin.data.stream import scan_schema

    with pytest.raises(DataError) as whole:
        read_dataset(BAD / name)
    with pytest.raises(DataError, match=pattern) as batches:
        scan_schema(open_batches(BAD / name, batch_rows=batch_rows))
    assert _one_line(batches.value, name) == str(whole.value)
