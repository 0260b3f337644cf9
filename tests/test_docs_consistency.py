"""The documents agree with the code and with the generated sections they quote.

Catches contradictions of these kinds: an option the docs name that the command line does not
have, or with another default; a first-use compile time
stated anywhere but docs/hdp.md (the compile notice states none); a figure quoted
from a generated training-time table that the table does not hold; a "fastest" structure that the
table does not make fastest; ESKDB said to be refused for batched data; a default structure in the
prose that is not the default.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

from hdp_plugin import config
from hdp_plugin.runtime.compile_notice import NOTICE
from hdp_plugin.cli import app
from hdp_plugin.params import PARAMETERS

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "java_bridge" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GENERATED = re.compile(r"<!-- ([\w-]+):begin.*?-->(.*?)<!-- \1:end -->", re.S)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _prose(path: Path) -> str:
    """The hand-written text: generated sections left out."""
    return GENERATED.sub("", _text(path))


def _clauses(text: str) -> list[str]:
    """Sentences and the parts of them between semicolons, each on one line."""
    flat = " ".join(text.split())
    return [c for c in re.split(r"(?<=[.;!?])\s+(?=[A-Z`*(\-])|;\s*", flat) if c]


def _commands():
    root = typer.main.get_command(app)
    out = {}

    def walk(group, path):
        for name, cmd in getattr(group, "commands", {}).items():
            out[" ".join(path + (name,))] = cmd
            walk(cmd, path + (name,))

    walk(root, ())
    return out


COMMANDS = _commands()


def _options(command: str) -> dict[str, object]:
    return {o: p for p in COMMANDS[command].params if p.param_type_name == "option" for o in p.opts + p.secondary_opts}


def _cli_table_rows(section: str):
    """(options, default) of each row of the option table under ``section`` of docs/cli.md."""
    text = _text(ROOT / "docs" / "cli.md").split(section, 1)[1]
    table = text.split("\n\n", 2)[1] if not text.lstrip().startswith("|") else text
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`-"):
            yield re.findall(r"`(-[\w-]+)", cells[0]), cells[1].strip("`")


def _shown_default(p) -> str | None:
    if isinstance(p.show_default, str):
        return p.show_default
    return None if p.default is None else str(p.default)


@pytest.mark.parametrize("section,commands", [("## Training options", ("train", "evaluate")),
                                              ("`train` only", ("train",))])
def test_options_in_docs_cli_exist_with_the_stated_default(section, commands):
    rows = list(_cli_table_rows(section))
    assert len(rows) >= 5
    for names, default in rows:
        for command in commands:
            opts = _options(command)
            for name in names:
                assert name in opts, f"docs/cli.md names {name}, which `hdp-bnc {command}` does not have"
            p = opts[names[0]]
            if p.is_flag or not default:
                continue
            shown = _shown_default(p)
            norm = "".join(default.split()).lower()
            assert shown is not None and "".join(shown.split()).lower() == norm, \
                f"docs/cli.md: {names[0]} defaults to {default!r}, `hdp-bnc {command} -h` says {shown!r}"


def test_every_long_option_the_docs_give_to_hdp_bnc_exists():
    every = set().union(*(_options(c) for c in COMMANDS))
    for path in DOCS:
        for cmd in re.findall(r"hdp-bnc (?:[a-z]+ )+[^`\n]*", _prose(path)):
            for name in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", cmd):
                assert name in every, f"{path.name}: `{cmd.strip()}` uses {name}, which no hdp-bnc command has"


def test_weka_options_table_states_the_spec_defaults():
    rows = {}
    for line in _text(ROOT / "java_bridge" / "README.md").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`-[\w]+`", cells[0]):
            rows[cells[0].strip("`-")] = cells[2].strip("`")
    checked = 0
    for p in PARAMETERS:
        if p.weka and p.weka in rows:
            want = p.default_in_weka
            want = {None: "", True: "true", False: "false"}.get(want, want) if not isinstance(want, (int, float)) \
                or isinstance(want, bool) else want
            got = rows[p.weka]
            assert got.replace(" ", "") == str(want).replace(" ", "") or (isinstance(want, float) and float(got) == want), \
                f"java_bridge/README.md: -{p.weka} defaults to {got!r}, the spec says {want!r}"
            checked += 1
    assert checked >= 5


def test_the_first_use_compile_time_is_stated_in_one_place():
    hdp = " ".join(_text(ROOT / "docs" / "hdp.md").split())
    # the measured range, and how it was measured
    assert re.search(r"The first default fit compiles for \d+-\d+ s on a 2-core machine", hdp)
    assert "NUMBA_CACHE_DIR" in hdp and 'fit_info_["compile_seconds"]' in hdp
    duration = re.compile(r"\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)? ?(?:s|seconds?|minutes?)\b|a minute|minutes")
    assert not duration.search(NOTICE), NOTICE  # the notice states no figure: it depends on the machine
    java = ROOT / "java_bridge" / "src" / "main" / "java"
    for path in (ROOT / "README.md", ROOT / "java_bridge" / "README.md", ROOT / "docs" / "cli.md",
                 *sorted(java.rglob("*.java"))):
        for clause in _clauses(_prose(path)):
            if re.search(r"compil", clause, re.I):
                assert not duration.search(clause), \
                    f"{path.name} states a compile time ({clause!r}); refer to docs/hdp.md, \"First use\""


def _training_times() -> dict[str, set[float]]:
    """Method -> its figures in the generated training-time tables of docs/benchmarks.md: a "Training
    time" table (a row of methods, a row of seconds) or the "training s" column of a table of methods."""
    out: dict[str, set[float]] = {}
    for _, body in GENERATED.findall(_text(ROOT / "docs" / "benchmarks.md")):
        if "### Training time" in body:
            lines = [ln for ln in body.split("### Training time", 1)[1].splitlines() if ln.startswith("|")]
            heads = [c.strip() for c in lines[0].strip("|").split("|")]
            values = [float(c) for c in lines[2].strip("|").split("|")]
            for h, v in zip(heads, values):
                out.setdefault(h, set()).add(v)
        lines = [ln for ln in body.splitlines() if ln.startswith("|")]
        for i, ln in enumerate(lines):
            heads = [c.strip() for c in ln.strip().strip("|").split("|")]
            if heads[0] == "method" and "training s" in heads:
                col = heads.index("training s")
                for row in lines[i + 2:]:
                    cells = [c.strip() for c in row.strip().strip("|").split("|")]
                    out.setdefault(cells[0], set()).add(float(cells[col]))
                break
    assert "HDP NB" in out and "HDP ESKDB" in out
    return out


def test_training_times_quoted_in_prose_are_the_tables():
    times = _training_times()
    quoted = 0
    for path in DOCS:
        for method, value in re.findall(r"(HDP (?:NB|TAN|kDB-\d|SkDB|ESKDB)) (?:trained in )?(\d+\.\d) s\b",
                                        " ".join(_prose(path).split())):
            assert float(value) in times[method], \
                f"{path.name} quotes {method} {value} s; the training-time tables say {sorted(times[method])}"
            quoted += 1
    assert quoted >= 5


def test_the_fastest_structure_is_the_one_the_tables_measured_fastest():
    times = _training_times()
    single = {s: min(times[f"HDP {n}"]) for s, n in (("nb", "NB"), ("tan", "TAN"), ("kdb", "kDB-5"),
                                                      ("skdb", "SkDB"), ("eskdb", "ESKDB"))}
    fastest = min(single, key=single.get)
    said = 0
    for path in DOCS + [ROOT / "hdp_plugin" / "params.py"]:
        for clause in _clauses(_prose(path)):
            m = re.search(r"(?:-[sS] |`|\b)(nb|tan|kdb|skdb|eskdb)`?\)?(?: \([^)]*\))*,? (?:is|was) the fastest", clause)
            if m:
                assert m.group(1) == fastest, f"{path.name} says {m.group(1)} is the fastest: {clause!r}"
                said += 1
    assert said >= 3


def test_no_document_says_eskdb_is_refused():
    # every structure trains in memory, from batches and on Dask (tests/test_stream.py, test_distributed.py)
    for path in DOCS:
        for clause in _clauses(_prose(path)):
            assert not re.search(r"eskdb\W[^.;]*\b(?:is|are) (?:refused|not available)", clause, re.I), \
                f"{path.name}: {clause!r} (streamed and distributed training train ESKDB)"


def test_prose_naming_the_default_structure_names_the_default():
    for path in DOCS:
        for m in re.finditer(r"[Tt]he defaults? \(`(\w+)`", " ".join(_prose(path).split())):
            if m.group(1) in config.STRUCTURES:
                assert m.group(1) == config.DEFAULT_STRUCTURE, f"{path.name}: {m.group(0)!r}"


def test_install_commands_name_only_what_can_be_installed():
    # hdp-plugin is not on a package index: extras install from a clone (".[extra]") or a built wheel
    for path in [*DOCS, *sorted((ROOT / "hdp_plugin").rglob("*.py"))]:
        for line in _text(path).splitlines():
            assert not re.search(r"pip install\W+hdp[-_]plugin\b", line), f"{path.name}: {line.strip()!r}"


def test_no_document_claims_a_single_kdb_is_faster_than_the_ensemble():
    for path in DOCS:
        for clause in _clauses(_prose(path)):
            assert not re.search(r"-S kdb[^.;]*(?<!no )(?<!not )faster than the (?:default )?ensemble", clause), \
                f"{path.relative_to(ROOT)}: {clause!r}"


def test_the_readme_states_no_test_count():
    # a count rots with every test added; the README says how long the suite takes instead
    assert not re.search(r"\b[\d,]+ tests\b", _text(ROOT / "README.md"))


def test_the_readme_comparison_is_the_generated_table_of_the_benchmarks():
    # README.md's figures come from docs/benchmarks.md through benchmarks/compare_table.py, never by hand
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare_table", ROOT / "benchmarks" / "compare_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sections = dict(GENERATED.findall(_text(ROOT / "README.md")))
    assert "readme-compare" in sections, "README.md has no generated section readme-compare"
    body = sections["readme-compare"].split("\n\n", 1)[1].strip()
    assert body == module.table(_text(ROOT / "docs" / "benchmarks.md")), \
        "README.md's readme-compare differs from `python benchmarks/compare_table.py`: rerun benchmarks/regenerate.sh"


def test_the_user_docs_stay_within_their_sizes():
    # README.md at most 8 KB and docs/*.md at most 150,000 bytes together; the studies behind the benchmarks
    # live in benchmarks/studies.md. Sizes count "\n" line ends, as a checkout with CRLF line ends holds the same
    def size(path: Path) -> int:
        return len(path.read_bytes().replace(b"\r\n", b"\n"))

    readme = size(ROOT / "README.md")
    docs = {f"docs/{p.name}": size(p) for p in sorted((ROOT / "docs").glob("*.md"))}
    sizes = ", ".join(f"{name} {n:,}" for name, n in {"README.md": readme, **docs}.items())
    assert readme <= 8192, f"README.md is {readme:,} bytes, over 8,192 ({sizes})"
    assert sum(docs.values()) <= 150_000, f"docs/*.md total {sum(docs.values()):,} bytes, over 150,000 ({sizes})"
