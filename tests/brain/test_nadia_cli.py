"""The `brain` CLI on the hand-written Nadia Brain (fixtures/nadia)."""

from __future__ import annotations

import json

import pytest

from brain.tree import DirTree
from brain.view import BrainView


def all_citations(root):
    view = BrainView(DirTree(root))
    return [(path, n) for path, doc in view.docs.items() for n in sorted(doc.frontmatter.sources)]


def test_every_citation_resolves_through_brain_cite(cli, nadia):
    citations = all_citations(nadia)
    assert len(citations) > 50
    for path, n in citations:
        result = cli("cite", path, str(n), "--brain", nadia, "--json")
        assert result.exit_code == 0, f"{path} [cite:{n}]: {result.stderr}"
        assert json.loads(result.stdout)["items"], f"{path} [cite:{n}] printed no evidence"


def test_validate_is_clean(cli, nadia):
    result = cli("validate", "--strict", "--brain", nadia)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stderr.startswith("no problems in ")


def test_index_show_links_and_log(cli, nadia):
    index = cli("index", "--brain", nadia, "--budget", "0").stdout
    assert index == (nadia / "knowledge/index.md").read_text(encoding="utf-8")
    assert cli("show", "JUDS", "--brain", nadia).stdout.startswith("---\ntitle: Japan Universal Design Sprint\n")
    backlinks = cli("backlinks", "nadia-rahman", "--brain", nadia).stdout.splitlines()
    assert backlinks and all(line.count("\t") == 2 for line in backlinks)
    links = cli("links", "Nadia Rahman", "--brain", nadia).stdout
    assert "(not found)" not in links
    log = cli("log", "nadia-rahman", "--brain", nadia).stdout.splitlines()
    assert len(log) == 1 and log[0].endswith("  -  fixture")


@pytest.mark.parametrize("budget", [100, 200, 400])
def test_index_trimming_fits_the_budget(cli, nadia, budget):
    data = json.loads(cli("index", "--brain", nadia, "--budget", str(budget), "--json").stdout)
    assert data["trimmed"] and data["tokens"] <= budget
    assert data["text"].endswith("for the rest)\n")
