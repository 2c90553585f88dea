"""`dream` CLI: thin commands — parse, load, call one function, render."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group()
@click.version_option(package_name="brain-dream")
def main() -> None:
    """Dream compiles raw agent sessions into a Brain (a git repo of markdown)."""


def _brain_root(brain: str | None) -> Path:
    import os

    return Path(brain or os.environ.get("BRAIN_HOME") or ".").resolve()


@main.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["jsonl", "claude-code", "chatgpt", "locomo", "longmemeval"]))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
def import_command(fmt: str, path: Path, brain: str | None, as_json: bool) -> None:
    """Import sessions from PATH in FORMAT into sessions/raw/ as canonical jsonl."""
    from dream.importers import import_path

    report = import_path(fmt, path, _brain_root(brain))
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        click.echo(report.summary())
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
