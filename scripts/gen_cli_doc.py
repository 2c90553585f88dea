"""Regenerate docs/cli.md from every command's `--help`: `python scripts/gen_cli_doc.py [--write]`.

A test compares the committed file with this output, so the reference cannot go stale.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WIDTH = 88
DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _help(command: click.Command, name: str, parent: click.Context | None) -> tuple[click.Context, str]:
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    return ctx, command.get_help(ctx)


def render_cli_doc() -> str:
    """The whole reference: `brain --help` and `dream --help`, each command's help, and brain.toml's keys."""
    from brain.cli import main as brain_main
    from dream.cli import main as dream_main

    out = [
        "# Command reference",
        "",
        "Generated from `--help` by `python scripts/gen_cli_doc.py --write`; do not edit by hand.",
    ]
    for prog, group in (("brain", brain_main), ("dream", dream_main)):
        ctx, text = _help(group, prog, None)
        out += ["", f"## {prog}", "", "```", text, "```"]
        for name in sorted(group.commands):
            _, text = _help(group.commands[name], name, ctx)
            out += ["", f"## {prog} {name}", "", "```", text, "```"]
    toml = (resources.files("brain") / "templates" / "init_brain.toml.j2").read_text(encoding="utf-8")
    out += ["", "## brain.toml", "", "Written by `brain init`; every key is optional.", "", "```toml", toml.rstrip("\n"), "```"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover
    doc = render_cli_doc()
    if "--write" in sys.argv[1:]:
        DOC_PATH.write_text(doc, encoding="utf-8")
    else:
        sys.stdout.write(doc)
