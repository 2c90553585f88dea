"""docs/cli.md, generated from every command's `--help`: `python -m brain.cli_doc [--write]`.

A test compares the committed file with this output, so the reference cannot go stale.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import click

WIDTH = 88
DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _help(command: click.Command, name: str, parent: click.Context | None) -> tuple[click.Context, str]:
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    return ctx, command.get_help(ctx)


def render_cli_doc() -> str:
    """The whole reference: `brain --help`, each command's help, and brain.toml's keys."""
    from brain.cli import main

    ctx, text = _help(main, "brain", None)
    out = [
        "# `brain` command reference",
        "",
        "Generated from `--help` by `python -m brain.cli_doc --write`; do not edit by hand.",
        "",
        "## brain",
        "",
        "```",
        text,
        "```",
    ]
    for name in sorted(main.commands):
        _, text = _help(main.commands[name], name, ctx)
        out += ["", f"## brain {name}", "", "```", text, "```"]
    toml = (resources.files("brain") / "templates" / "init_brain.toml.j2").read_text(encoding="utf-8")
    out += ["", "## brain.toml", "", "Written by `brain init`; every key is optional.", "", "```toml", toml.rstrip("\n"), "```"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover
    doc = render_cli_doc()
    if "--write" in sys.argv[1:]:
        DOC_PATH.write_text(doc, encoding="utf-8")
    else:
        sys.stdout.write(doc)
