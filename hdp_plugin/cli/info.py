"""``hdp-bnc info`` and ``show``: a model file described, and its network as Graphviz DOT or a picture.
Both read the file without numba."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import HDPError, ParameterError
from .common import cli_errors as _errors
from .files import _output, drawing_kind, force_option

ForceOpt = force_option("DOT text or a picture in the format of its suffix")


def info(
    model: Annotated[Path, typer.Argument(help="A model file written by hdp-bnc train.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the model's metadata document as JSON.")] = False,
) -> None:
    """Describe a model file: structure, tree sizes, concentrations, settings and versions."""
    with _errors():
        from ..model.modelfile import read_model  # reads and checks it all, without numba

        contents = read_model(model)
        if as_json:
            typer.echo(json.dumps({"model": contents.doc, "training": contents.training}, indent=2))
            return
        from ..model.render import info_text

        typer.echo(info_text(model, contents))


def show(
    model: Annotated[Path, typer.Argument(help="A model file written by hdp-bnc train.")],
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Write to this file instead of stdout: .dot as text, .png, .svg or .pdf through Graphviz's dot.",
                     show_default="DOT on stdout"),
    ] = None,
    member: Annotated[Optional[int], typer.Option(
        "--member", metavar="N", help="Draw member N (0, 1, ...) of an ensemble instead of what its members share.",
        show_default="an ensemble: how many members have each edge")] = None,
    force: ForceOpt = False,
) -> None:
    """Print the network as Graphviz DOT, or draw it to a picture with -o net.png or net.svg."""
    with _errors():
        from ..model.modelfile import read_model  # the file read and checked, without numba

        from ..model.render import network_dot, shared_dot

        fmt = output.suffix.lower().lstrip(".") if output is not None else None
        if output is not None:  # before the work: a format, a place or a file it cannot write is refused at once
            target = _output(output, model, kind=drawing_kind(fmt), force=force)
            if fmt not in ("dot", "gv", "png", "svg", "pdf"):
                raise ParameterError(f"-o must end in .dot, .gv, .png, .svg or .pdf, got {output.name!r}")
            output = target
        contents = read_model(model)
        nets, cls = contents.networks, contents.class_attribute.name
        if member is not None and not 0 <= member < len(nets):
            raise ParameterError(f"--member {member} is out of range: {model} has "
                                 + (f"{len(nets)} members, give 0 to {len(nets) - 1}" if len(nets) > 1
                                    else "one network, give 0 or leave --member out"))
        if len(nets) == 1 or member is not None:
            net = nets[member or 0]
            title = f"member {member} of the ESKDB ensemble of {len(nets)} members" if len(nets) > 1 else None
            dot_text = network_dot(net.attributes, net.structure, cls, title,
                                   "hdp-bnc show without --member draws what the members share")
        else:  # an ensemble: what its members share
            dot_text = shared_dot(nets, cls)
        if output is None:
            sys.stdout.write(dot_text)
            return
        if fmt in ("dot", "gv"):
            from .._fs import replacing

            with replacing(output) as tmp:
                tmp.write_text(dot_text, encoding="utf-8")
            return
        exe = shutil.which("dot")
        if exe is None:
            raise HDPError(
                f"drawing {output.name} needs Graphviz's 'dot' program, which is not installed; "
                f"install Graphviz or write DOT text with -o {output.with_suffix('.dot').name}"
            )
        done = subprocess.run([exe, f"-T{fmt}", "-o", str(output)], input=dot_text.encode("utf-8"),
                              capture_output=True, check=False)
        if done.returncode != 0:
            raise HDPError(f"dot failed on {output.name}: {done.stderr.decode(errors='replace').strip()}")

