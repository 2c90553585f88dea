"""The README's Quick start is run as written (minus the install): `dream demo` then `brain index`."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from brain.cli import main as brain_main
from dream.cli import main as dream_main

README = Path(__file__).resolve().parent.parent / "README.md"


def quick_start_commands() -> list[list[str]]:
    """The shell blocks under '## Quick start', split at '&&' into argv lists."""
    section = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [shlex.split(part) for block in blocks for part in block.strip().split("&&")]


def test_quick_start_has_two_commands_install_and_test():
    section = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    assert "dream demo" in blocks[0] and "brain index" in blocks[0]
    assert "pytest" in blocks[1]


def test_quick_start_demo_and_index_run(tmp_path: Path):
    runner = CliRunner()
    commands = [c for c in quick_start_commands() if Path(c[0]).name in ("dream", "brain")]
    assert [Path(c[0]).name for c in commands][:2] == ["dream", "brain"]
    outputs = []
    for argv in commands[:2]:
        args = [str(tmp_path / "demo") if a == "/tmp/nadia-brain" else a for a in argv[1:]]
        main = dream_main if Path(argv[0]).name == "dream" else brain_main
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    index = outputs[1]
    assert index.startswith("# Index\n")
    assert "[[nadia-rahman|Nadia Rahman]]" in index
    assert "[[sora-city-laboratory|Sora City Laboratory]]" in index
