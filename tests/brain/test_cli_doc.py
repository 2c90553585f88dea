"""docs/cli.md is generated from --help; this fails when the committed file is stale."""

from __future__ import annotations

from scripts.gen_cli_doc import DOC_PATH, render_cli_doc


def test_docs_cli_md_is_up_to_date():
    assert DOC_PATH.read_text(encoding="utf-8") == render_cli_doc(), (
        "docs/cli.md is stale: run `python scripts/gen_cli_doc.py --write` and commit it"
    )


def test_every_command_is_documented():
    doc = render_cli_doc()
    for name in ("init", "index", "show", "links", "backlinks", "cite", "log", "validate", "search", "context"):
        assert f"\n## brain {name}\n" in doc
        assert f"Usage: brain {name} [OPTIONS]" in doc
    for name in ("run", "import", "status", "replay", "demo", "eval"):
        assert f"\n## dream {name}\n" in doc
        assert f"Usage: dream {name} [OPTIONS]" in doc
