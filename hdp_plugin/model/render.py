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


def _range(values) -> str:
    """``3 to 8``, or ``4`` when they are all the same."""
    return str(min(values)) if min(values) == max(values) else f"{min(values)} to {max(values)}"


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
    """What ``hdp-bnc info`` prints about a model file (``contents``: :func:`~.modelfile.read_model`'s),
    in lines of at most :data:`WIDTH` characters: first what the model is (structure, class, training,
    attributes, the sampler's run and, for an ensemble, its members and the attributes they use most),
    then the file, the estimator, the seeds, every member's own choices, the intervals of the numeric
    attributes and the first network's trees."""
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
        f"training       {doc['fit'].get('rows')} rows" + _fit_time(training),
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
    whole = f"model file     {path}"  # a path stays whole, to be copied, even past 80 columns
    out = [wrapped for line in lines for wrapped in ([line] if line == whole else _field(line))]
    if ensemble:
        rows = [(str(e), str(len(p["structure"]["kept"])), str(p["structure"]["k"]), str(tr.n_observed),
                 " ".join(names[j] for j in p["structure"]["order"]))
                for e, (p, tr) in enumerate(zip(parts, nets))]
        out += _grid(("member", "kept", "k", "cells", "attribute order"), rows, right=(0, 1, 2, 3), clip=(4,))
        out += [*_wrap("kept: the attributes a member uses; k: the most attribute parents it gives one; "
                       "cells: its table cells with training rows."), ""]
    out += _intervals(parts, names)
    if ensemble:
        out += ["member 0's context trees:"]
    out += _network_lines(parts[0], names, est["name"] == "hdp")
    return "\n".join(out)


def _fit_time(training: dict) -> str:
    """``, fit time 1.23 s``, and the time a first use spent compiling numba's kernels (not in it)."""
    fit, compiling = _number(training.get("fit_seconds")), _number(training.get("compile_seconds"))
    if fit is None:  # absent, or not a number: the training document is not checked
        return ""
    text = f", fit time {fit:.2f} s"
    if compiling:
        text += f" (and {compiling:.2f} s compiling numba's kernels, once)"
    return text


#: the width of ``info``'s lines
WIDTH = 80
#: the label column of ``info``'s fields (``structure      ...``)
_LABEL = 15
#: the most intervals ``info`` lists of one attribute; more are shown as the first and last few
_MAX_INTERVALS = 8
#: a space within a cell that a line is not broken at (:func:`_wrap`)
_NBSP = "\u00a0"


def _pieces(word: str, width: int) -> list[str]:
    """``word`` in pieces of at most ``width`` characters, each ending after a hyphen or a slash where
    one is."""
    out = []
    while len(word) > width:
        cut = max(word.rfind("-", 1, width), word.rfind("/", 1, width)) + 1 or width
        out.append(word[:cut])
        word = word[cut:]
    return out + [word]


def _wrap(text: str, width: int = WIDTH, indent: str = "", first: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces (not at :data:`_NBSP`); a word
    longer than a line starts a line and is cut after a hyphen or slash (:func:`_pieces`); ``first``
    before the first line, ``indent`` before the others."""
    import textwrap

    room = width - max(len(first), len(indent))
    words = [p for w in text.split(" ") if w for p in _pieces(w, max(room, 1))]
    lines = textwrap.wrap(" ".join(words), width=width, initial_indent=first, subsequent_indent=indent,
                          break_long_words=True, break_on_hyphens=False) or [first.rstrip()]
    return [line.replace(_NBSP, " ") for line in lines]


def _field(line: str) -> list[str]:
    """A ``label          text`` line of ``info`` wrapped to :data:`WIDTH`, the text's later lines under
    its first; other lines as they are (wrapped if too long)."""
    if len(line) <= WIDTH:
        return [line]
    label, text = line[:_LABEL], line[_LABEL:]
    if label.strip() and label.endswith(" ") and not text.startswith(" "):
        return _wrap(text, indent=" " * _LABEL, first=label)
    return _wrap(line)


def _grid(heads, rows, *, right=(), clip=(), width: int = WIDTH, gap: int = 2) -> list[str]:
    """``rows`` (tuples of strings) under ``heads`` as columns in lines of at most ``width``: every column as
    wide as its widest cell, the widest text columns narrowed until the lines fit (their cells then
    wrap over lines, or, for the columns in ``clip``, end in ``...``); the columns in ``right`` are
    aligned right."""
    n = len(heads)
    widths = [max(len(str(r[i])) for r in [heads, *rows]) for i in range(n)]

    def longest_word(i: int) -> int:
        return max(len(w) for r in [heads, *rows] for w in str(r[i]).split() or [""])

    # first no word broken, then down to 8 characters a column
    for cap in (WIDTH, 8):
        least = [widths[i] if i in right else max(8, min(longest_word(i), cap)) for i in range(n)]
        while sum(widths) + gap * (n - 1) > width:
            narrowable = [i for i in range(n) if widths[i] > least[i]]
            if not narrowable:
                break
            widths[max(narrowable, key=lambda c: widths[c])] -= 1

    def cell(text: str, i: int) -> list[str]:
        text = str(text)
        if len(text) <= widths[i]:
            return [text.replace(_NBSP, " ")]
        if i in clip:
            return [text[: widths[i] - 3].rsplit(" ", 1)[0] + " ..." if " " in text[: widths[i] - 3]
                    else text[: widths[i] - 3] + "..."]
        return _wrap(text, widths[i])

    out = []
    for r in [heads, *rows]:
        cells = [cell(r[i], i) for i in range(n)]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "") for c in cells]
            out.append((" " * gap).join(f"{v:>{w}}" if i in right else f"{v:<{w}}"
                                        for i, (v, w) in enumerate(zip(parts, widths))).rstrip())
    return out


def _numbers(cuts: list[float]) -> list[str]:
    """The cut points as short numbers (6 significant digits), or in full where that would make two equal."""
    short = [f"{c:.6g}" for c in cuts]
    return short if len(set(short)) == len(short) else [repr(float(c)) for c in cuts]


def interval_text(cuts, space: str = " ") -> str:
    """The intervals of a numeric attribute's cut points, ``(-inf, 1.5] (1.5, 3.2] (3.2, inf)`` (a value
    ``v`` falls in ``(a, b]`` when ``a < v <= b``); of more than :data:`_MAX_INTERVALS`, the first and
    last few and how many there are. ``space`` is the one inside an interval (:data:`_NBSP` keeps an
    interval on one line in :func:`_wrap`)."""
    bounds = ["-inf", *_numbers(list(cuts)), "inf"]
    shown = [f"({a},{space}{b}{']' if b != 'inf' else ')'}" for a, b in zip(bounds[:-1], bounds[1:])]
    if len(shown) > _MAX_INTERVALS:
        return " ".join(shown[:3] + ["..."] + shown[-2:]) + f" ({len(shown)} intervals)"
    return " ".join(shown)


def _intervals(parts: list[dict], names: list[str]) -> list[str]:
    """The intervals each numeric attribute is cut into: the network's, or member 0's for an ensemble
    (whose members draw their own: how many intervals they make is said too)."""
    numeric = [j for j, a in enumerate(parts[0]["attributes"]) if a["numeric"] and a.get("cut_points") is not None]
    if not numeric:
        return []
    ensemble = len(parts) > 1
    if ensemble:
        out = _wrap("member 0's intervals of the numeric attributes (each member draws its own cut points; "
                    "intervals: how many the members make; info --json has them all):")
        rows = [(names[j], _range([len(p["attributes"][j]["cut_points"] or ()) + 1 for p in parts]),
                 interval_text(parts[0]["attributes"][j]["cut_points"], _NBSP)) for j in numeric]
        out += _grid(("attribute", "intervals", "member 0's"), rows, right=(1,))
    else:
        out = ["intervals of the numeric attributes:"]
        rows = [(names[j], interval_text(parts[0]["attributes"][j]["cut_points"], _NBSP)) for j in numeric]
        out += _grid(("attribute", "intervals (a value v is in (a, b] when a < v <= b)"), rows)
    return out + [""]


def _network_lines(net: dict, names: list[str], hdp: bool) -> list[str]:
    """The table of one network's trees: nodes, cells, concentrations by depth, parents."""
    rows = []
    for td in net["trees"]:
        by_depth = []
        for lo_hi in (td.get("concentrations") or []) if hdp else []:  # one per depth under level tying
            if lo_hi is not None:
                lo, hi = (_number(v) for v in lo_hi)
                by_depth.append(f"{lo:.3g}" if lo == hi else f"{lo:.3g}..{hi:.3g}")
        row = (td["name"], str(td["nodes"]), str(td["cells"]), " ".join(by_depth),
               ", ".join(names[p] for p in td["branching"][1:]) or "-")
        rows.append(row if hdp else row[:3] + row[4:])
    heads = ("attribute", "nodes", "cells", "concentrations by depth", "attribute parents, in branching order")
    lines = _grid(heads if hdp else heads[:3] + heads[4:], rows, right=(1, 2))
    dropped = [names[j] for j in range(len(names)) if j not in set(net["structure"]["kept"])]
    if dropped:
        lines += _wrap(f"not used: {', '.join(dropped)}", indent="  ")
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


def network_dot(attributes, st, cls: str, title: str | None = None, note: str | None = None) -> str:
    """A network (its attributes, :class:`~hdp_plugin.structure.Structure` and class name) in Graphviz's
    DOT language; ``title``, when given, is the graph's label (what is drawn), ``note`` a comment
    under it."""
    names = [a.name for a in attributes]
    lines = _dot_head(cls, title, note)
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


def _dot_head(cls: str, title: str | None, note: str | None = None) -> list[str]:
    lines = ["digraph network {", "  rankdir=TB;"]
    if title:
        lines += [f"  // {title}" + (f"; {note}" if note else ""), f"  label={_dot_id(title)};", "  labelloc=t;",
                  '  fontname="Helvetica";']
    return lines + ['  node [shape=ellipse, fontname="Helvetica"];', '  edge [fontname="Helvetica"];',
                    f"  {_dot_id(cls)} [shape=box, style=filled, fillcolor=lightgrey];"]


def shared_title(n_members: int) -> str:
    """What :func:`shared_dot` draws, in words (the graph's label)."""
    return f"ESKDB ensemble of {n_members} members: each edge labelled with how many members have it"


def shared_dot(networks, cls: str) -> str:
    """What the networks of an ensemble share, in DOT: the class points to every attribute some member
    uses, an attribute to each attribute it is a parent of in some member, every edge labelled with
    how many of the members have it (``7/20``) and drawn thicker the more have it; attributes no
    member uses are dashed."""
    names = [a.name for a in networks[0].attributes]
    m = len(networks)
    uses = [0] * len(names)
    edges: dict[tuple[int, int], int] = {}
    for net in networks:
        for j in net.structure.kept:
            uses[j] += 1
            for p in net.structure.parents[j]:
                edges[(p, j)] = edges.get((p, j), 0) + 1
    lines = _dot_head(cls, shared_title(m), "a thicker edge is in more members; hdp-bnc show --member N draws member N")

    def style(n: int) -> str:
        return f'label="{n}/{m}", penwidth={1 + 3 * n / m:.2f}'

    for j, name in enumerate(names):
        if not uses[j]:
            lines.append(f"  {_dot_id(name)} [style=dashed, fontcolor=grey50, color=grey50];  // used by no member")
    for j in range(len(names)):
        if uses[j]:
            lines.append(f"  {_dot_id(cls)} -> {_dot_id(names[j])} [{style(uses[j])}, color=grey40];")
    for (p, j), n in sorted(edges.items(), key=lambda e: (-e[1], e[0])):
        lines.append(f"  {_dot_id(names[p])} -> {_dot_id(names[j])} [{style(n)}, color=steelblue];")
    lines.append("}")
    return "\n".join(lines) + "\n"
