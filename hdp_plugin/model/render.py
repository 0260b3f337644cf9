"""Renderers of a model: the text of ``hdp-bnc info`` and the network as Graphviz DOT (``hdp-bnc show``).

They read a model file's contents (:func:`hdp_plugin.model.modelfile.read_model`), without numba; the
command line prints what they return.
"""

from __future__ import annotations

from pathlib import Path

from ..params import k_capped_note, structure_name, usable_k


def _number(v) -> float | None:
    """A figure of the training document (which the readers do not check, docs/model-format.md section 5) as a
    float, or None when it is not a JSON number; a number of the model document (a checked one) as a float,
    an integer beyond a double's range infinite."""
    if type(v) not in (int, float):
        return None
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _stopping_info(est: dict) -> list[str]:
    """The auto iterations' line of ``info``: the tolerance and how many trees stopped where."""
    its = est.get("tree_iterations")
    if its is None:
        return []
    counts = {}
    for v in its:
        counts[v] = counts.get(v, 0) + 1
    where = ", ".join(f"{n} at {v}" for v, n in sorted(counts.items()))
    return [f"stopping       auto, tolerance {est.get('tolerance')}: trees stopped {where} iterations"]


#: the most class labels ``info`` lists
_MAX_LABELS = 20
#: the most members ``info`` lists by number as shrunk to their table-cell cap
_MAX_LISTED = 20
#: the most attributes ``info`` lists as the ones an ensemble's members use most
_MAX_MOST_USED = 10

#: what each tying of the HDP concentrations shares, in words
_TYINGS = {"level": "one concentration per depth of a tree", "none": "one concentration per node",
           "same-parent": "one concentration per set of siblings", "single": "one concentration per tree"}


def _labels(values) -> str:
    """The class labels for ``info``: all of them, or the first ones and how many more."""
    shown = ", ".join(str(v) for v in values[:_MAX_LABELS])
    return shown + (f", ... ({len(values) - _MAX_LABELS:,} more)" if len(values) > _MAX_LABELS else "")


def _span(values) -> str:
    """``3 to 8 (median 5)``, or ``4`` when they are all the same."""
    values = sorted(values)
    if values[0] == values[-1]:
        return str(values[0])
    return f"{values[0]} to {values[-1]} (median {values[len(values) // 2]})"


def _iterations(est: dict, params: dict) -> list[str]:
    """The HDP sampler's run in words: how many iterations, the burn-in and the averages."""
    if est["name"] != "hdp":
        return []
    if est.get("tree_iterations") is None:
        return [f"iterations     {est['iterations']} Gibbs iterations a tree ({est['burn_in']} of burn-in, "
                f"then {est['n_samples']} averaged)"]
    burn_in = params.get("burn_in")
    burn_in = "a tenth of each tree's run" if burn_in is None else f"the first {burn_in} iterations"
    return [f"iterations     at most {est['iterations']} Gibbs iterations a tree; burn-in {burn_in}, the rest averaged"]


def _estimator(est: dict) -> list[str]:
    """The estimator and its settings in words (``--json`` has them by their field names)."""
    if est["name"] != "hdp":
        extra = f", m {est['m']}" if "m" in est else ""
        return [f"estimator      {est['name']}{extra}, back-off to the {est.get('backoff', 'uniform')} distribution"]
    tying = est.get("tying")
    return ["estimator      hdp (hierarchical Dirichlet process), back-off to the parent's estimate",
            f"tying          {tying}: {_TYINGS.get(tying, tying)}; table counts drawn within a window of "
            f"{est.get('window')}"]


def _most_used(parts: list[dict], names: list[str]) -> str:
    """The attributes an ensemble's members keep most, with how many members keep each."""
    counts = [0] * len(names)
    for p in parts:
        for j in p["structure"]["kept"]:
            counts[j] += 1
    ranked = sorted((j for j in range(len(names)) if counts[j]), key=lambda j: (-counts[j], j))
    shown = [f"{names[j]} {counts[j]}" for j in ranked[:_MAX_MOST_USED]]
    more = len(ranked) - _MAX_MOST_USED
    return f"most used      {', '.join(shown)}{f', ... ({more} more)' if more > 0 else ''} (of {len(parts)} members)"


def _cell_cap(parts: list[dict]) -> list[str]:
    """The ``info`` line of the members that SkDB's selection shrank to stay within their table-cell cap
    (``structure.info.cell_limited``: the best model's n*, k* and cells, and the cap): none if none was."""
    infos = [p["structure"].get("info") for p in parts]
    limited = [(e, i["cell_limited"]) for e, i in enumerate(infos)
               if isinstance(i, dict) and isinstance(i.get("cell_limited"), dict)]
    if not limited:
        return []
    if len(parts) == 1:
        (_, c), st = limited[0], parts[0]["structure"]
        return [f"cell cap       the best model ({c.get('n_star')} attributes, k = {c.get('k_star')}) has "
                f"{c.get('cells')} table cells, more than the cap of {c.get('max_cells')}: took the best within it "
                f"({len(st['kept'])} attributes, k = {st['k']})"]
    caps = sorted({str(c.get("max_cells")) for _, c in limited})
    shown = ", ".join(str(e) for e, _ in limited[:_MAX_LISTED])
    more = f" and {len(limited) - _MAX_LISTED} more" if len(limited) > _MAX_LISTED else ""
    return [f"cell cap       {len(limited)} of {len(parts)} members took a smaller model than their best, to stay "
            f"within {' or '.join(caps)} table cells each: member{'s' if len(limited) > 1 else ''} "
            f"{shown}{more}"]


def info_text(path: Path, contents) -> str:
    """What ``hdp-bnc info`` prints about a model file (``contents``: :func:`~.modelfile.read_model`'s):
    first what the model is (structure, class, training, attributes, the sampler's run and, for an
    ensemble, its members and the attributes they use most), then the file, the estimator, the seeds,
    every member's own choices and the first network's trees."""
    doc, training = contents.doc, contents.training
    est = doc["estimator"]
    ensemble = contents.ensemble
    parts = doc["members"]
    names = [a["name"] for a in parts[0]["attributes"]]
    nets = [n.tables for n in contents.networks]
    st = parts[0]["structure"]
    params = contents.params
    # the k used: k asked for, capped at the attributes less one (and a note when the cap applies)
    k_used = usable_k(params["structure"], params["k"], len(names))
    capped = k_capped_note(params["structure"], params["k"], len(names))
    if ensemble:
        structure = (f"ESKDB, {len(parts)} members, each a selective kDB (SkDB) of at most K = {k_used} attribute "
                     f"parents{'; ' + capped if capped else ''}")
        used = len(set().union(*(p["structure"]["kept"] for p in parts)))
    else:
        kind = st["kind"]
        structure = structure_name(kind, min(st["k"], k_used) if kind == "kdb" else st["k"])
        structure += f" ({capped})" if capped else ""
        used = len(st["kept"])
    lines = [
        f"structure      {structure}",
        f"class          {doc['class']['name']} ({_labels(doc['class']['values'])})",
        f"training       {doc['fit'].get('rows')} rows"
        + (f", fit time {_number(training.get('fit_seconds')):.2f} s"
           if _number(training.get("fit_seconds")) is not None else ""),
        f"attributes     {len(names)}, {used} used{' by some member' if ensemble else ''}, "
        f"{sum(a['numeric'] for a in parts[0]['attributes'])} numeric (cut into intervals)",
        *([f"left out       {', '.join(n for _, n in contents.left_out)} (row identifiers)"]
          if contents.left_out else []),
    ]
    if ensemble:
        lines += [
            _most_used(parts, names),
            f"members        each on its own attribute order and cut points, keeping "
            f"{_span([len(p['structure']['kept']) for p in parts])} attributes",
            f"parents        an attribute takes at most k attribute parents, k chosen by each member: "
            f"{_span([p['structure']['k'] for p in parts])}",
        ]
    lines += [*_cell_cap(parts), *_iterations(est, params), *_stopping_info(est), *_stream_info(doc, training), ""]
    lines += [
        f"model file     {path}",
        f"format         {doc['format_version'][0]}.{doc['format_version'][1]}, written by hdp_plugin {doc['package_version']}",
        *_estimator(est),
        f"seed           {doc['seed']}" + (f" (member e draws from stream e of it), discretization "
                                          f"{params['discretization']}" if ensemble else ""),
        f"trees          {sum(t.n_trees for t in nets)} trees, {sum(t.n_nodes for t in nets)} nodes, "
        f"{sum(t.n_observed for t in nets)} cells with training rows (of {sum(t.n_cells for t in nets)})",
        "",
    ]
    if ensemble:
        heads = ("member", "attributes kept", "parents each", "cells with rows", "attribute order (first 8)",
                 "cut points per numeric attribute")
        rows = []
        for e, (p, tr) in enumerate(zip(parts, nets)):
            rows.append((str(e), str(len(p["structure"]["kept"])), str(p["structure"]["k"]), str(tr.n_observed),
                         " ".join(names[j] for j in p["structure"]["order"][:8]),
                         " ".join(str(len(a["cut_points"])) for a in p["attributes"] if a["numeric"]) or "-"))
        widths = [max(len(r[i]) for r in [heads] + rows) for i in range(len(heads))]
        for r in [heads] + rows:
            lines.append("  ".join([*(f"{v:>{w}}" for v, w in zip(r[:4], widths)), f"{r[4]:<{widths[4]}}", r[5]])
                         .rstrip())
        lines += ["", "member 0's context trees:"]
    lines += _network_lines(parts[0], names, est["name"] == "hdp")
    return "\n".join(lines)


def _network_lines(net: dict, names: list[str], hdp: bool) -> list[str]:
    """The table of one network's trees: nodes, cells, concentrations by depth, parents."""
    rows = []
    for td in net["trees"]:
        by_depth = []
        for lo_hi in (td.get("concentrations") or []) if hdp else []:  # one per depth under level tying
            if lo_hi is not None:
                lo, hi = (_number(v) for v in lo_hi)
                by_depth.append(f"{lo:.3g}" if lo == hi else f"{lo:.3g}..{hi:.3g}")
        rows.append((td["name"], str(td["nodes"]), str(td["cells"]), " ".join(by_depth),
                     ", ".join(names[p] for p in td["branching"][1:]) or "-"))
    heads = ("attribute", "nodes", "cells", "concentrations by depth" if hdp else "", "attribute parents, in branching order")
    widths = [max(len(r[i]) for r in rows + [heads]) for i in range(4)]
    lines = []
    for r in [heads] + rows:
        lines.append(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  "
                     + (f"{r[3]:<{widths[3]}}  " if hdp else "") + r[4])
    dropped = [names[j] for j in range(len(names)) if j not in set(net["structure"]["kept"])]
    if dropped:
        lines.append(f"not used: {', '.join(dropped)}")
    return lines


def _stream_info(doc: dict, training: dict) -> list[str]:
    """The ``info`` line of a model trained from batches: engine, and the discretisation sample (the training
    document is not checked: any JSON value prints as itself)."""
    if training.get("streamed") is not True:
        return []
    line = f"streamed       in batches, engine {training.get('engine', 'local')}"
    sample = training.get("discretization_sample")
    sample = sample if isinstance(sample, dict) else {}
    if sample.get("numeric_attributes"):
        cuts = "every member's cut points" if len(doc["members"]) > 1 else "cut points"
        if sample.get("all_rows"):
            line += f"; {cuts} learnt on all {sample.get('rows')} rows"
        else:
            line += (f"; {cuts} learnt on a sample of {sample.get('rows')} of {doc['fit'].get('rows')} rows "
                     f"(--discretization-sample {sample.get('limit')})")
    return [line]


def _dot_id(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def network_dot(attributes, st, cls: str) -> str:
    """A network (its attributes, :class:`~hdp_plugin.structure.Structure` and class name) in Graphviz's
    DOT language."""
    names = [a.name for a in attributes]
    lines = [
        "digraph network {",
        "  rankdir=TB;",
        '  node [shape=ellipse, fontname="Helvetica"];',
        f"  {_dot_id(cls)} [shape=box, style=filled, fillcolor=lightgrey];",
    ]
    kept = set(st.kept)
    for j, name in enumerate(names):
        if j not in kept:
            lines.append(f"  {_dot_id(name)} [style=dashed, fontcolor=grey50, color=grey50];  // not used")
    for j in st.kept:
        lines.append(f"  {_dot_id(cls)} -> {_dot_id(names[j])};")
    for j in st.kept:
        for rank, p in enumerate(st.parents[j], start=1):
            lines.append(f"  {_dot_id(names[p])} -> {_dot_id(names[j])} [taillabel={rank}, color=steelblue];")
    lines.append("}")
    return "\n".join(lines) + "\n"
