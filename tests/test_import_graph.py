"""The package's import graph, in-function imports included: no circle between modules or between
sub-packages, so that the stages read downstream (data -> preprocess -> structure -> hdp -> model),
and the daemon reaches the sampler only through the engine."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hdp_plugin"


def _modules() -> dict[str, Path]:
    mods = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    return mods


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its text (top level or in a function).
    ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in mods else origin for a in node.names]
            else:
                continue
            edges[mod] |= {t for t in targets if t in mods and t != mod}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _subpackage(mod: str) -> str:
    return ".".join(mod.split(".")[:2])


def _is_ancestor(package: str, mod: str) -> bool:
    return mod.startswith(package + ".")


def test_the_graph_sees_in_function_imports_and_finds_a_planted_circle():
    edges = _imports(_modules())
    assert "hdp_plugin.hdp.trees" in edges["hdp_plugin.model.pipeline"]
    # an import inside a function body counts (the estimation step imports the sampler, the CLI the
    # model lazily)
    assert "hdp_plugin.hdp.sampler" in edges["hdp_plugin.model.estimate"]
    assert "hdp_plugin.model" in edges["hdp_plugin.cli.train"] or any(
        t.startswith("hdp_plugin.model") for t in edges["hdp_plugin.cli.train"])
    planted = {k: set(v) for k, v in edges.items()}
    planted["hdp_plugin.data.dataset"].add("hdp_plugin.model.classifier")
    assert _cycles(planted)


def test_no_circle_between_modules():
    edges = _imports(_modules())
    # a module importing its own package's __init__ (``from . import name``) is not a circle: the
    # package is imported before any of its modules anyway
    edges = {m: {t for t in ts if not _is_ancestor(t, m)} for m, ts in edges.items()}
    assert _cycles(edges) == []


def _entry_point(mod: str) -> bool:
    return mod.rsplit(".", 1)[-1] == "__main__"


def test_no_circle_between_subpackages():
    """Entry points count in the sub-package they live in (nothing imports one, checked here): the
    daemon's commands are the command line's (``python -m hdp_plugin daemon``), so an entry point inside
    ``hdp_plugin/daemon`` running them would close a circle daemon -> cli -> daemon."""
    imports = _imports(_modules())
    assert not [m for m, ts in imports.items() if any(_entry_point(t) for t in ts)]
    edges: dict[str, set[str]] = {}
    for mod, targets in imports.items():
        edges.setdefault(_subpackage(mod), set()).update(
            _subpackage(t) for t in targets if _subpackage(t) != _subpackage(mod))
    assert _cycles(edges) == []


def test_the_daemon_package_does_not_import_the_command_line():
    """The command line runs the daemon (``hdp-bnc daemon``), never the other way round: no module of
    hdp_plugin.daemon, its entry point included, imports hdp_plugin.cli."""
    edges = _imports(_modules())
    assert "hdp_plugin.daemon.client" in edges["hdp_plugin.cli.daemon"]
    up = {m: sorted(t for t in ts if t.startswith("hdp_plugin.cli")) for m, ts in edges.items()
          if m.startswith("hdp_plugin.daemon")}
    assert {m: ts for m, ts in up.items() if ts} == {}


def test_the_daemon_reaches_the_sampler_only_through_the_engine():
    edges = _imports(_modules())
    direct = {m: sorted(t for t in ts if t.startswith("hdp_plugin.hdp"))
              for m, ts in edges.items() if m.startswith("hdp_plugin.daemon")}
    assert {m: ts for m, ts in direct.items() if ts} == {}


def test_the_runtime_imports_no_stage_and_only_entry_points_import_the_command_line():
    edges = _imports(_modules())
    stages = ("data", "preprocess", "structure", "hdp", "model", "distributed", "daemon", "cli")
    runtime = {m: sorted(t for t in ts if _subpackage(t) in {f"hdp_plugin.{s}" for s in stages})
               for m, ts in edges.items() if m.startswith("hdp_plugin.runtime")}
    assert {m: ts for m, ts in runtime.items() if ts} == {}
    outside = {m: sorted(t for t in ts if t.startswith("hdp_plugin.cli")) for m, ts in edges.items()
               if not m.startswith("hdp_plugin.cli") and not _entry_point(m)}
    assert {m: ts for m, ts in outside.items() if ts} == {}


def test_the_floor_plan():
    """At most 9 modules loose in the package (``__init__`` and ``__main__`` aside), none over 1,000 lines."""
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(loose) <= 9, loose
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 1000}
    assert long == {}


def test_the_command_line_modules_stay_small():
    """No module of hdp_plugin/cli over 600 lines: a command and its helpers live in a module of their own
    (train, predict, evaluate, info and show, the daemon's), and what they share in files, progress,
    options and common."""
    long = {p.name: n for p in (PACKAGE / "cli").glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
