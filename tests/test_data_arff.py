"""The ARFF reader: real UCI files against liac-arff, fast path against exact path, the syntax corners."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import arff as liac
import numpy as np
import pytest

from hdp_plugin.data import read_dataset
from hdp_plugin.data.arff import java_date_format, parse_date, read_arff
from hdp_plugin.errors import DataError

DATA = Path(__file__).parent / "data"

# file -> (rows, non-class attributes, numeric attributes, class values)
UCI = {
    "breast-cancer": (286, 9, 0, 2),
    "contact-lenses": (24, 4, 0, 3),
    "credit-g": (1000, 20, 7, 2),
    "diabetes": (768, 8, 8, 2),
    "glass": (214, 9, 9, 7),
    "ionosphere": (351, 34, 34, 2),
    "iris": (150, 4, 4, 3),
    "labor": (57, 16, 8, 2),
    "segment-challenge": (1500, 19, 19, 7),
    "segment-test": (810, 19, 19, 7),
    "soybean": (683, 35, 0, 19),
    "vote": (435, 16, 0, 2),
    "weather.nominal": (14, 4, 0, 2),
    "weather.numeric": (14, 4, 2, 2),
}


def decoded(ds) -> list[list]:
    """The dataset's values in source column order, as liac-arff gives them (None for missing)."""
    cols = []
    num = ds.numeric_columns()
    for j, a in enumerate(ds.attributes):
        if j in num:
            cols.append([None if np.isnan(v) else float(v) for v in ds.numeric[:, num[j]]])
        else:
            labels = list(a.values) + [None]
            cols.append([labels[c] for c in ds.X[:, j]])
    labels = list(ds.class_values)
    cols.insert(ds.class_index, [None if c < 0 else labels[c] for c in ds.y])
    return [list(r) for r in zip(*cols)]


def liac_rows(path: Path) -> tuple[list, list]:
    with open(path, encoding="utf-8") as f:
        ref = liac.load(f)
    rows = [[float(v) if isinstance(v, (int, float)) else v for v in row] for row in ref["data"]]
    return ref["attributes"], rows


def write(tmp_path: Path, text: str, name: str = "t.arff") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("name", sorted(UCI))
@pytest.mark.parametrize("engine", ["fast", "exact"])
def test_uci_files_match_liac_arff(name, engine):
    path = DATA / f"{name}.arff"
    rows, n_attr, n_numeric, n_classes = UCI[name]
    ds = read_arff(path, engine=engine)
    assert (ds.n_rows, ds.n_attributes, ds.n_classes) == (rows, n_attr, n_classes)
    assert sum(a.numeric for a in ds.attributes) == n_numeric
    assert ds.X.flags.c_contiguous and ds.X.dtype == np.uint8
    assert ds.class_index == n_attr  # the last attribute
    ref_attrs, ref_rows = liac_rows(path)
    assert [a.name for a in ds.attributes] + [ds.class_attribute.name] == [a[0] for a in ref_attrs]
    for a, (_, typ) in zip(ds.attributes, ref_attrs):
        if isinstance(typ, list):
            assert a.values == tuple(typ) and not a.numeric
        else:
            assert a.is_pending_numeric
    assert decoded(ds) == ref_rows


@pytest.mark.parametrize("name", sorted(UCI))
def test_fast_and_exact_paths_agree(name):
    fast = read_arff(DATA / f"{name}.arff", engine="fast")
    exact = read_arff(DATA / f"{name}.arff", engine="exact")
    assert fast.equals(exact)
    assert not fast.take(np.arange(fast.n_rows - 1)).equals(exact)


def _generated(n: int, quote: str, seed: int = 1) -> str:
    rng = np.random.default_rng(seed)
    lab = ["a", "b c", "d", "?x"]
    q = [f"{quote}{v}{quote}" if (" " in v or "?" in v) else v for v in lab]
    head = (f"@relation gen\n@attribute n1 {{{', '.join(q)}}}\n@attribute x1 numeric\n"
            f"@attribute x2 integer\n@attribute cls {{yes,no}}\n@data\n")
    lines = []
    for _ in range(n):
        i = rng.integers(0, 5)
        v1 = "?" if i == 4 else q[i]
        x1 = "?" if rng.random() < 0.05 else f"{rng.normal():.4g}"
        x2 = str(rng.integers(-5, 5))
        c = "?" if rng.random() < 0.02 else ["yes", "no"][rng.integers(0, 2)]
        sep = ", " if rng.random() < 0.3 else ","
        lines.append(sep.join([v1, x1, x2, c]))
        if rng.random() < 0.01:
            lines.append("% a comment line")
        if rng.random() < 0.01:
            lines.append("")
    return head + "\n".join(lines) + "\n"


@pytest.mark.parametrize("quote", ["'", '"'])
def test_fast_path_on_generated_file_agrees_with_exact(tmp_path, quote):
    p = write(tmp_path, _generated(3000, quote))
    fast = read_arff(p, engine="fast")
    exact = read_arff(p, engine="exact")
    assert fast.n_rows == 3000
    assert fast.attributes[0].values == ("a", "b c", "d", "?x")
    assert fast.equals(exact)
    assert (fast.y == -1).any() and (fast.X[:, 0] == 4).any()


def test_syntax_corners(tmp_path):
    text = r"""% comment before the header
@RELATION 'my relation'

@Attribute 'first name' {'a b', "c,d", 'it\'s', plain}   % trailing comment
@attribute "x y" REAL
@ATTRIBUTE n3{u,v}
@attribute  cls  { yes , no }
@DATA
% comment in the data
'a b', 1.5, u, yes
"c,d",?,v,no   % inline comment
'it\'s' , -2e3 , ?, yes

plain,'3', u, ?
"it's", 4, v, no
"""
    p = write(tmp_path, text)
    ds = read_dataset(p)
    assert ds.relation == "my relation"
    assert ds.names == ["first name", "x y", "n3"]
    assert ds.attributes[0].values == ("a b", "c,d", "it's", "plain")
    assert ds.class_attribute.values == ("yes", "no")
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 2, 3, 2])
    np.testing.assert_array_equal(ds.X[:, 2], [0, 1, 2, 0, 1])
    np.testing.assert_array_equal(ds.numeric[:, 0], [1.5, np.nan, -2000.0, 3.0, 4.0])
    np.testing.assert_array_equal(ds.y, [0, 1, 0, -1, 1])
    np.testing.assert_array_equal(read_arff(p, engine="exact").X, ds.X)


def test_escapes_and_quoted_question_mark(tmp_path):
    text = "@relation r\n@attribute a {'\\t', '?', 'x\\\\y', '\\u00e9'}\n@attribute c {p,q}\n@data\n" \
           "'\\t',p\n'?',q\n?,p\n'x\\\\y',q\n'\\u00e9',p\n"
    ds = read_dataset(write(tmp_path, text))
    assert ds.attributes[0].values == ("\t", "?", "x\\y", "\u00e9")
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 4, 2, 3])


def test_non_ascii_names_and_values(tmp_path):
    text = "@relation r\n@attribute 'größe' {klein, groß}\n@attribute c {ja,nein}\n@data\ngroß,ja\nklein,nein\n"
    ds = read_dataset(write(tmp_path, text))
    assert ds.names == ["größe"] and ds.attributes[0].values == ("klein", "groß")
    np.testing.assert_array_equal(ds.X[:, 0], [1, 0])


def test_crlf_bom_and_gzip(tmp_path):
    text = "\ufeff@relation r\r\n@attribute a {x,y}\r\n@attribute c {p,q}\r\n@data\r\nx,p\r\n\r\ny,q\r\n"
    p = tmp_path / "t.arff"
    p.write_bytes(text.encode("utf-8"))
    ds = read_dataset(p)
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1])
    gz = tmp_path / "t.arff.gz"
    gz.write_bytes(gzip.compress(text.encode("utf-8")))
    np.testing.assert_array_equal(read_dataset(gz).X, ds.X)


def test_sparse_rows(tmp_path):
    text = """@relation sparse
@attribute w1 numeric
@attribute w2 numeric
@attribute colour {red, green, 'light blue'}
@attribute w3 numeric
@attribute cls {pos, neg}
@data
{0 1.5, 2 green, 4 neg}
{1 2, 3 ?}
{}
{2 'light blue', 4 pos}
3, 4, red, 5, neg
{0 7,4 neg} {2.5}
"""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ds = read_dataset(write(tmp_path, text))
    assert any("instance weight" in str(x.message) for x in w)
    assert ds.n_rows == 6
    np.testing.assert_array_equal(ds.X[:, 2], [1, 0, 0, 2, 0, 0])
    np.testing.assert_array_equal(ds.numeric, [[1.5, 0, 0], [0, 2, np.nan], [0, 0, 0], [0, 0, 0], [3, 4, 5], [7, 0, 0]])
    np.testing.assert_array_equal(ds.y, [1, 0, 0, 0, 1, 1])  # absent class: the first label
    ref_attrs, ref_rows = liac_rows(write(tmp_path, text.replace(" {2.5}", ""), "ref.arff"))
    ours = decoded(ds)
    # liac-arff gives absent sparse values as 0 for every type; ours are Weka's (first label)
    for r_ours, r_ref in zip(ours, ref_rows):
        for (name, typ), a, b in zip(ref_attrs, r_ours, r_ref):
            if isinstance(typ, list) and b == 0:
                b = typ[0]
            assert a == b


def test_string_and_date_attributes(tmp_path):
    text = """@relation r
@attribute note string
@attribute when date 'yyyy-MM-dd HH:mm:ss'
@attribute day date "yyyy-MM-dd"
@attribute stamp date
@attribute cls {a, b}
@data
'hello world', '2001-02-03 04:05:06', 1970-01-02, 1970-01-01T00:00:01, a
zebra, ?, 2000-01-01, ?, b
'hello world', '1969-12-31 23:59:59', ?, 1970-01-01T00:00:00, a
"""
    p = write(tmp_path, text)
    for engine in ("fast", "exact"):
        with pytest.warns(UserWarning, match="string attribute 'note'"):
            ds = read_arff(p, engine=engine)
        assert ds.attributes[0].values == ("hello world", "zebra")
        np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 0])
        assert [a.numeric for a in ds.attributes] == [False, True, True, True]
        np.testing.assert_array_equal(ds.numeric[:, 0], [981173106000.0, np.nan, -1000.0])
        np.testing.assert_array_equal(ds.numeric[:, 1], [86400000.0, 946684800000.0, np.nan])
        np.testing.assert_array_equal(ds.numeric[:, 2], [1000.0, np.nan, 0.0])


def test_java_date_formats():
    assert java_date_format("yyyy-MM-dd'T'HH:mm:ss") == "%Y-%m-%dT%H:%M:%S"
    assert java_date_format("dd/MM/yy hh:mm a") == "%d/%m/%y %I:%M %p"
    assert parse_date("2020-01-01 00:00:00.250", java_date_format("yyyy-MM-dd HH:mm:ss.SSS")) == 1577836800250.0
    assert parse_date("1970-01-01 01:00 +0100", java_date_format("yyyy-MM-dd HH:mm Z")) == 0.0
    with pytest.raises(ValueError, match="'G'"):
        java_date_format("G yyyy")


def test_class_choice_and_missing_class_kept(tmp_path):
    text = "@relation r\n@attribute a {x,y}\n@attribute b numeric\n@attribute c {p,q}\n@data\nx,1,p\ny,2,?\n"
    p = write(tmp_path, text)
    ds = read_dataset(p, class_attribute="a")
    assert ds.class_attribute.name == "a" and ds.names == ["b", "c"] and ds.class_index == 0
    ds = read_dataset(p)
    np.testing.assert_array_equal(ds.y, [0, -1])
    kept, dropped = ds.drop_missing_class()
    assert dropped == 1 and kept.n_rows == 1


def test_header_only_file_gives_empty_dataset(tmp_path):
    ds = read_dataset(write(tmp_path, "@relation r\n@attribute a {x,y}\n@attribute c {p,q}\n@data\n"))
    assert ds.n_rows == 0 and ds.X.shape == (0, 1)


def test_many_values_use_wider_codes(tmp_path):
    labels = [f"v{i}" for i in range(300)]
    text = f"@relation r\n@attribute a {{{','.join(labels)}}}\n@attribute c {{p,q}}\n@data\n" + \
        "".join(f"v{i},p\n" for i in range(0, 300, 7))
    ds = read_dataset(write(tmp_path, text))
    assert ds.X.dtype == np.uint16
    np.testing.assert_array_equal(ds.X[:, 0], np.arange(0, 300, 7))


FALLBACK_CASES = {
    "whitespace-only line": "x,1,p\n   \ny,2,q\n",
    "trailing comma": "x,1,p,\ny,2,q\n",
    "inline comment": "x,1,p % why\ny,2,q\n",
    "quoted value with spaces": "' x',1,p\ny,2,q\n",
    "both quote kinds": "'x',1,p\n\"y\",2,q\n",
    "backslash escape": "'x\\'y',1,p\ny,2,q\n",
    "space-separated weight": "x,1,p, {2}\ny,2,q\n",
}


@pytest.mark.parametrize("case", sorted(FALLBACK_CASES))
def test_fast_path_falls_back_to_exact(tmp_path, case):
    """Rows the fast path cannot vouch for are read by the exact path, with the same result."""
    head = "@relation r\n@attribute a {x, ' x', \"x'y\", y}\n@attribute b numeric\n@attribute c {p,q}\n@data\n"
    p = write(tmp_path, head + FALLBACK_CASES[case])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the instance-weight case warns
        with pytest.raises(DataError, match="fast ARFF path cannot read"):
            read_arff(p, engine="fast")
        auto, exact = read_arff(p), read_arff(p, engine="exact")
    assert auto.n_rows == 2
    np.testing.assert_array_equal(auto.X, exact.X)
    np.testing.assert_array_equal(auto.y, [0, 1])
    np.testing.assert_array_equal(auto.numeric[:, 0], [1, 2])


def test_single_attribute_file(tmp_path):
    ds = read_dataset(write(tmp_path, "@relation r\n@attribute c {p,q}\n@data\np\n  \nq\n?\n"))
    assert ds.n_attributes == 0 and ds.X.shape == (3, 0)
    np.testing.assert_array_equal(ds.y, [0, 1, -1])


def test_quoted_commas_on_the_fast_path(tmp_path):
    text = "@relation r\n@attribute a {'b,c', d}\n@attribute n numeric\n@attribute c {p,q}\n@data\n" + \
        "'b,c',1,p\nd,2,q\n" * 50
    ds = read_arff(write(tmp_path, text), engine="fast")
    np.testing.assert_array_equal(ds.X[:4, 0], [0, 1, 0, 1])
