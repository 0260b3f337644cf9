"""``info`` fits 80 columns and shows cut points as intervals; ``show`` says what it draws: an ensemble's
shared structure by default, one member with ``--member N``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hdp_plugin.cli import commands as cli
from hdp_plugin.model import load_model

HERE = Path(__file__).resolve().parent
SEGMENT = HERE / "data" / "segment-challenge.arff"  # 19 numeric attributes with long names, 7 classes
GOLDEN_ESKDB = HERE / "golden" / "models" / "diabetes-eskdb-hdp.hdpbnc"


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The default ensemble and a kDB-5 of segment, in a directory of a long name (the model file's
    path is a line of info)."""
    where = tmp_path_factory.mktemp("a-directory-whose-name-makes-the-model-files-path-longer-than-a-line")
    out = {}
    for name, args in (("eskdb", ()), ("kdb", ("-s", "kdb", "-k", "5", "-i", "100"))):
        out[name] = where / f"segment-{name}.hdpbnc"
        result = run("train", SEGMENT, "-o", out[name], *args, "-q")
        assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("name", ["eskdb", "kdb"])
def test_info_fits_80_columns(models, name):
    text = run("info", models[name]).stdout
    path_line = f"model file     {models[name]}"  # whole, to be copied, however long
    assert path_line in text.splitlines()
    wide = [line for line in text.splitlines() if len(line) > 80 and line != path_line]
    assert not wide, "\n".join(wide)
    assert text.isascii(), [line for line in text.splitlines() if not line.isascii()]
    for attribute in ("short-line-density-5", "region-centroid-col", "saturation-mean"):
        assert attribute in text


@pytest.mark.parametrize("name", ["eskdb", "kdb"])
def test_info_shows_cut_points_as_intervals(models, name):
    clf = load_model(models[name])
    text = run("info", models[name]).stdout
    flat = " ".join(text.split())
    attrs = clf.members_[0].attributes
    a = next(a for a in attrs if a.numeric and 1 <= len(a.cut_points) <= 3)
    first = f"(-inf, {a.cut_points[0]:.6g}]"
    assert f"{a.name} " in flat and first in flat and f"({a.cut_points[-1]:.6g}, inf)" in flat
    if name == "eskdb":
        assert "member 0's intervals of the numeric attributes" in flat


def test_interval_text():
    from hdp_plugin.model.render import interval_text

    assert interval_text([1.5, 3.2]) == "(-inf, 1.5] (1.5, 3.2] (3.2, inf)"
    assert interval_text([]) == "(-inf, inf)"
    assert interval_text([1.0000001, 1.0000002]) == "(-inf, 1.0000001] (1.0000001, 1.0000002] (1.0000002, inf)"
    many = interval_text(list(range(1, 20)))
    assert many == "(-inf, 1] (1, 2] (2, 3] ... (18, 19] (19, inf) (20 intervals)"


def test_info_of_a_golden_ensemble_fits_80_columns_with_its_member_table():
    text = run("info", GOLDEN_ESKDB).stdout
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith("model file "))
    assert "member  kept  k  cells  attribute order" in text


def _edges(dot: str) -> dict[tuple[str, str], str]:
    return {(a, b): attrs for a, b, attrs in re.findall(r'^\s*"([^"]+)" -> "([^"]+)"(?: \[(.*)\])?;', dot, re.M)}


def test_show_draws_what_an_ensembles_members_share_and_says_so():
    clf = load_model(GOLDEN_ESKDB)
    m = len(clf.members_)
    dot = run("show", GOLDEN_ESKDB).stdout
    assert f'label="ESKDB ensemble of {m} members: each edge labelled with how many members have it"' in dot
    names = [a.name for a in clf.members_[0].attributes]
    expected: dict[tuple[str, str], int] = {}
    for mb in clf.members_:
        for j in mb.structure.kept:
            expected[("class", names[j])] = expected.get(("class", names[j]), 0) + 1
            for p in mb.structure.parents[j]:
                expected[(names[p], names[j])] = expected.get((names[p], names[j]), 0) + 1
    got = _edges(dot)
    assert set(got) == set(expected)
    for edge, n in expected.items():
        assert f'label="{n}/{m}"' in got[edge], (edge, got[edge])
    assert any(n < m for n in expected.values())  # the members differ: not member 0's drawing


def test_show_member_draws_that_member_and_refuses_one_out_of_range():
    clf = load_model(GOLDEN_ESKDB)
    m = len(clf.members_)
    for e in range(m):
        dot = run("show", GOLDEN_ESKDB, "--member", e).stdout
        assert f'label="member {e} of the ESKDB ensemble of {m} members"' in dot
        st = clf.members_[e].structure
        assert len(_edges(dot)) == len(st.kept) + sum(len(st.parents[j]) for j in st.kept)
    for bad in (m, -1):
        result = run("show", GOLDEN_ESKDB, "--member", bad)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr == (f"error: --member {bad} is out of range: {GOLDEN_ESKDB} has {m} members, give 0 "
                                 f"to {m - 1}\n")
    single = HERE / "golden" / "models" / "vote-kdb2-hdp.hdpbnc"
    assert run("show", single, "--member", 0).stdout == run("show", single).stdout
    result = run("show", single, "--member", 1)
    assert result.exit_code == 2 and "--member 1" in result.stderr and result.stderr.count("\n") == 1
