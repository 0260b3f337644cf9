"""The ``--help`` of every ``hdp-bnc`` command, legible at any terminal width.

Plain text in sections: the usage line, the command's description, its arguments, its options in
groups (:data:`PANELS`, or an option's own ``rich_help_panel``), and a group's commands. Each entry is
its flags and value (``-s, --structure <str>``) and its help, with ``[default: ...]`` and
``[required]``. Where the terminal leaves the help at least :data:`MIN_HELP` characters beside the
flags, they share a line (an entry too long for the flag column takes a line of its own, the help
below it in the same column); on a narrower terminal every help goes on lines of its own below its
flags. It reads the parameters typer builds (flags, help, defaults, types), not typer's own
rendering, which changes between typer's releases.
"""

from __future__ import annotations

import os
import shutil
import textwrap

#: the option groups of every command that has them, by long flag; an option in none of them (the output,
#: --threads, --quiet, --help...) is under "Options". A command's own groups (:data:`COMMAND_PANELS`) come first.
PANELS = {
    "Model": ("--structure", "--max-parents", "--members", "--estimator", "--iterations", "--burn-in", "--tying",
              "--prior-weight", "--seed"),
    "Data": ("--class", "--discretization", "--categorical", "--keep-columns", "--class-values", "--format",
             "--separator", "--decimal"),
    "Limits": ("--max-input-mb", "--max-cardinality", "--max-cells"),
    "Batches and engines": ("--stream", "--discretization-sample", "--engine", "--scheduler", "--workers"),
    "Cross-validation": ("--folds", "--repeats", "--cv"),
    "Job": ("--name", "--client", "--wait", "--timeout", "--no-daemon-timeout"),
}
COMMAND_PANELS = {
    "daemon run": {"Workers": ("--workers", "--threads", "--worker-memory-mb", "--engine", "--scheduler")},
}
DEFAULT_PANEL = "Options"
#: the order of the groups in a help
PANEL_ORDER = ("Options", "Job", "Cross-validation", "Model", "Data", "Workers", "Limits", "Batches and engines")


def _panel_of(command: str, flag: str) -> str:
    for panels in (COMMAND_PANELS.get(command, {}), PANELS):
        for panel, flags in panels.items():
            if flag in flags:
                return panel
    return DEFAULT_PANEL


#: the narrowest help column beside the flags; below it the help goes under the flags
MIN_HELP = 36
#: the widest flag column (longer entries take a line of their own)
MAX_FLAGS = 26
#: the widest text, however wide the terminal
MAX_WIDTH = 100
INDENT = 2
#: the indent of a help on lines of its own, under its flags
UNDER = 6

_TYPE_NAMES = {"text": "str", "integer": "int", "integer range": "int", "float": "float", "float range": "float",
               "path": "path", "filename": "path", "file": "path", "choice": "str", "boolean": "bool"}


def terminal_width() -> int:
    """The terminal's columns (``COLUMNS`` when set), within 40 and :data:`MAX_WIDTH`."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = shutil.get_terminal_size((80, 24)).columns
    return max(40, min(columns, MAX_WIDTH))


def _wrap(text: str, width: int, indent: int) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), max(width, indent + 20), initial_indent=" " * indent,
                         subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False) or [""]


def _metavar(p, ctx) -> str:
    """The value an option takes: its own metavar, else its type (``<int>``, ``<path>``); none for a flag."""
    if getattr(p, "is_flag", False) or getattr(p, "count", False):
        return ""
    if p.metavar:
        return p.metavar
    if hasattr(p, "display_type"):  # typer >= 0.26 types its parameters itself
        return p.display_type(ctx)
    name = getattr(p.type, "name", "value")
    return f"<{_TYPE_NAMES.get(name, name)}>"


def _flags(p, ctx, align: bool) -> str:
    shorts = [o for o in p.opts + p.secondary_opts if not o.startswith("--")]
    longs = [o for o in p.opts + p.secondary_opts if o.startswith("--")]
    text = ", ".join(shorts + longs)
    if align and not shorts:
        text = "    " + text
    value = _metavar(p, ctx)
    return f"{text} {value}" if value else text


def _extra(p) -> str:
    """``[default: ...]`` and ``[required]``, as the help of the parameter ends."""
    parts = []
    show = getattr(p, "show_default", None)
    if isinstance(show, str):
        parts.append(f"[default: ({show})]")
    elif show is not False and not getattr(p, "is_flag", False) and p.default is not None and not p.required \
            and p.param_type_name == "option":
        default = p.default
        if isinstance(default, (list, tuple)):
            default = ", ".join(map(str, default))
        parts.append(f"[default: {default}]")
    if p.required:
        parts.append("[required]")
    return " ".join(parts)


def _entries(rows: list[tuple[str, str]], width: int, flag_width: int) -> list[str]:
    """Flags and help of each row, side by side where the help keeps :data:`MIN_HELP` columns."""
    column = INDENT + flag_width + 2
    side = width - column >= MIN_HELP
    lines = []
    for flags, text in rows:
        if not side:
            lines.append(" " * INDENT + flags)
            if text:
                lines += _wrap(text, width, UNDER)
            continue
        wrapped = _wrap(text, width, column) if text else []
        if len(flags) <= flag_width and wrapped:
            lines.append(" " * INDENT + flags.ljust(flag_width) + "  " + wrapped[0][column:])
            lines += wrapped[1:]
        else:
            lines.append(" " * INDENT + flags)
            lines += wrapped
    return lines


def _paragraphs(text: str, width: int) -> list[str]:
    lines = []
    for para in textwrap.dedent(text).strip().split("\n\n"):
        if lines:
            lines.append("")
        lines += _wrap(para, width, INDENT)
    return lines


def render(command, ctx, width: int | None = None) -> str:
    """The help text of ``command`` (a click command or group typer built) in its context ``ctx``."""
    width = terminal_width() if width is None else width
    pieces = command.collect_usage_pieces(ctx)
    out = textwrap.wrap(" ".join([ctx.command_path, *pieces]), width, initial_indent="Usage: ",
                        subsequent_indent=" " * 7, break_long_words=False, break_on_hyphens=False)
    if command.help:
        out += [""] + _paragraphs(command.help, width)
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    arguments = [((p.metavar or p.name or "").upper(), " ".join(filter(None, [getattr(p, "help", None) or "",
                                                                              _extra(p)])))
                 for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name != "argument"]
    key = " ".join(ctx.command_path.split()[1:])  # "daemon run"
    align = any(not o.startswith("--") for p in options for o in p.opts + p.secondary_opts)
    panels: dict[str, list[tuple[str, str]]] = {}
    for p in options:
        long = next((o for o in p.opts if o.startswith("--")), p.opts[0])
        panel = getattr(p, "rich_help_panel", None) or _panel_of(key, long)
        panels.setdefault(panel, []).append((_flags(p, ctx, align), " ".join(filter(None, [p.help or "", _extra(p)]))))
    order = {name: i for i, name in enumerate(PANEL_ORDER)}
    sections = ([("Arguments", arguments)] if arguments else []) + sorted(
        panels.items(), key=lambda item: order.get(item[0], len(order)))
    commands = getattr(command, "commands", None)
    if commands:
        rows = []
        for name in command.list_commands(ctx):
            sub = commands[name]
            if not getattr(sub, "hidden", False):
                rows.append((name, (sub.short_help or sub.help or "").split("\n\n")[0]))
        sections.append(("Commands", rows))
    flag_width = min(max((len(f) for _, rows in sections for f, _ in rows), default=0), MAX_FLAGS)
    for title, rows in sections:
        out += ["", f"{title}:"] + _entries(rows, width, flag_width)
    return "\n".join(out) + "\n"
