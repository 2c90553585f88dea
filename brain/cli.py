"""`brain` CLI: every command parses, loads the Brain, calls one library function, and renders.

Library errors (BrainError) are rendered once, in BrainGroup, as `error: …` and `hint: …` on
stderr with exit status 1. Modules beyond click are imported inside the commands, so that
`brain --help` stays fast (networkx, git and the validators are only loaded when used).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from brain import __version__
from brain.cli_agents import hook, install, mcp, serve
from brain.cli_options import brain_option, embedder_name, embedder_option, json_option, root_of
from brain.errors import BrainError, PageError


class BrainGroup(click.Group):
    """A click group that renders BrainError as `error:`/`hint:` lines and exits 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrainError as exc:
            where = f"{exc.path}:{exc.line}: " if isinstance(exc, PageError) else ""
            click.echo(f"error: {where}{exc.message}", err=True)
            if exc.hint:
                click.echo(f"hint: {exc.hint}", err=True)
            ctx.exit(1)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@click.group(cls=BrainGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="brain")
def main() -> None:
    """Read a Brain: a git repository of markdown pages that Dream compiles from agent sessions.

    Start with `brain index`, open pages with `brain show NAME`, follow links with
    `brain links` / `brain backlinks`, and check a claim's evidence with `brain cite NAME N`.
    """


@main.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--owner", metavar="NAME", help="Whose Brain this is: the person \"I\" and \"me\" are in the sessions "
              "(default: git config user.name).")
@json_option
def init(path: Path, owner: str | None, as_json: bool) -> None:
    """Create a new Brain in PATH and commit it in git.

    PATH defaults to the current folder. A folder that already has files is fine as long
    as it has no knowledge/ yet: files that exist (brain.toml, guide.md, …) are kept, and
    .gitignore gets the lines it lacks.
    """
    from brain.repo import git_user_name
    from brain.scaffold import init_brain

    report = init_brain(path, owner=(owner or git_user_name() or "").strip() or None)
    if as_json:
        _echo_json(report.model_dump())
        return
    click.echo(f"Initialised a Brain in {report.root}")
    for verb, paths in (("created", report.created), ("updated", report.updated), ("kept", report.kept)):
        for rel in paths:
            click.echo(f"  {verb:<8}{rel}")
    repo = "new git repository, " if report.new_repo else ""
    click.echo(f"  {repo}commit {report.commit[:7]}" if report.commit else f"  {repo}nothing to commit")


@main.command()
@click.option("--budget", type=click.IntRange(min=0), default=None, metavar="TOKENS",
              help="Token budget (default: [index] budget in brain.toml, else 8000; 0: no limit).")
@brain_option
@json_option
def index(budget: int | None, brain_path: str | None, as_json: bool) -> None:
    """Print the map of the Brain, within a token budget.

    Prints knowledge/index.md (rendered from the pages when it is missing). Tokens are
    estimated as characters / 3.5. Over budget, the least valuable lines are dropped (value:
    person, project and preference pages first, then more backlinks, then more recently
    updated) and a last line says how many pages were left out.
    """
    from brain.answers import index_result

    result = index_result(root_of(brain_path), budget)
    if as_json:
        _echo_json({**result.model_dump(), "trimmed": result.trimmed})
        return
    click.echo(result.text, nl=False)


@main.command()
@click.argument("name")
@brain_option
@json_option
def show(name: str, brain_path: str | None, as_json: bool) -> None:
    """Print a page, note or session summary.

    NAME is a slug, alias, title, note stem, session id or path (case-insensitive). With
    --json: its front matter, body, links and cites, each with its line.
    """
    from brain.answers import show_text, view_of
    from brain.lookup import find_doc

    root = root_of(brain_path)
    if not as_json:
        click.echo(show_text(root, name), nl=False)
        return
    view = view_of(root)
    path = find_doc(view, name)
    if path in view.errors:
        raise view.errors[path]
    page = view.docs[path]
    _echo_json({
        "path": path, "slug": page.slug, "frontmatter": page.frontmatter.model_dump(), "body": page.body,
        "links": [lk.model_dump() for lk in page.links], "cites": [c.model_dump() for c in page.cites],
    })


def _print_rows(rows: list[dict[str, Any]], as_json: bool, empty: str) -> None:
    from brain.answers import rows_text

    if as_json:
        _echo_json(rows)
        return
    click.echo(rows_text(rows), nl=False)
    if not rows:
        click.echo(empty, err=True)


@main.command()
@click.argument("name")
@brain_option
@json_option
def links(name: str, brain_path: str | None, as_json: bool) -> None:
    """List the links written in a page.

    One line per link: `slug<TAB>line<TAB>path`, where line is the line in NAME; a link
    that resolves to nothing shows `(not found)`.
    """
    from brain.answers import graph_of, link_rows

    _print_rows(link_rows(graph_of(root_of(brain_path)), name, "target"), as_json, f"{name} links to no page")


@main.command()
@click.argument("name")
@brain_option
@json_option
def backlinks(name: str, brain_path: str | None, as_json: bool) -> None:
    """List the documents that link to a page.

    One line per link: `slug<TAB>line<TAB>path` of the linking document, where line is the
    line of the link in it.
    """
    from brain.answers import graph_of, link_rows

    _print_rows(link_rows(graph_of(root_of(brain_path)), name, "source"), as_json, f"no document links to {name}")


@main.command()
@click.argument("name")
@click.argument("n", type=int)
@brain_option
@json_option
def cite(name: str, n: int, brain_path: str | None, as_json: bool) -> None:
    """Print the evidence behind a citation.

    Resolves `[cite:N]` of NAME through its `sources` and prints each cited turn (session,
    turn, speaker and time, then the text indented), or the connector record or note.
    """
    from brain.answers import cite_text, view_of
    from brain.evidence import cite_evidence
    from brain.lookup import find_doc

    root = root_of(brain_path)
    if not as_json:
        click.echo(cite_text(root, name, n), nl=False)
        return
    view = view_of(root)
    _echo_json(cite_evidence(view, find_doc(view, name), n).model_dump())


@main.command()
@click.argument("name")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=50, show_default=True, help="Most commits to show.")
@brain_option
@json_option
def log(name: str, limit: int, brain_path: str | None, as_json: bool) -> None:
    """Show the git history of a page.

    Newest first, following renames. One line per commit: short sha, date, author, Dream
    run id (`-` for manual edits), subject. A path (knowledge/…/x.md) also works for a page
    that no longer exists.
    """
    from brain.answers import view_of
    from brain.lookup import find_doc
    from brain.repo import BrainRepo

    root = root_of(brain_path)
    path = name if name.endswith(".md") and "/" in name else find_doc(view_of(root), name)
    entries = BrainRepo(root).log(path, limit=limit)
    if as_json:
        _echo_json([e.model_dump() for e in entries])
        return
    for e in entries:
        click.echo(f"{e.sha[:7]}  {e.date[:10]}  {e.author}  {e.run_id or '-'}  {e.subject}")
    if not entries:
        click.echo(f"no commits touch {path} yet", err=True)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Lint lines (path:line: CODE message) or a JSON list of findings.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("--select", default=None, metavar="CODES", help="Only these checks: codes or prefixes, comma-separated (C,L001).")
@click.option("--ignore", default=None, metavar="CODES", help="Skip these checks: codes or prefixes, comma-separated.")
@brain_option
@click.pass_context
def validate(ctx: click.Context, fmt: str, as_json: bool, strict: bool, select: str | None, ignore: str | None,
             brain_path: str | None) -> None:
    """Check the Brain with the deterministic validators.

    Runs on the files as they are (uncommitted manual edits included); docs/validators.md
    lists the codes. Prints one finding per line, then a summary on stderr. Exit status 1
    when there is an error (or, with --strict, a warning), else 0.
    """
    from brain.answers import view_of
    from validators import run_checks

    view = view_of(root_of(brain_path))
    findings = run_checks(view, select=select, ignore=ignore)
    if as_json or fmt == "json":
        _echo_json([f.model_dump() for f in findings])
    else:
        for finding in findings:
            click.echo(finding.lint_line())
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    click.echo(_summary(errors, warnings, len(view.files)), err=True)
    if errors or (strict and warnings):
        ctx.exit(1)


@main.command()
@click.argument("query")
@click.option("-k", "--k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many results.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(["page", "summary", "note", "turn"]),
              help="Only these kinds of chunk (repeatable; default: all).")
@embedder_option
@brain_option
@json_option
def search(query: str, k: int, kinds: tuple[str, ...], embedder: str | None, brain_path: str | None, as_json: bool) -> None:
    """Search page statements, memory cards, session summaries and raw turns.

    Hybrid ranking: BM25 (SQLite FTS5, porter stemming) and dense vectors (wordllama, offline)
    fused by reciprocal rank fusion, then adjusted by a card's confidence and by recency. Without
    the embedding model or FTS5 it degrades to lexical, dense or recency order; the mode is
    printed on stderr. The index lives in .dream/cache/ and is updated on every call.
    """
    from brain.search import Searcher

    root = root_of(brain_path)
    searcher = Searcher.open(root, embedder=embedder_name(root, embedder))
    result = searcher.search(query, k=k, kinds=kinds)
    searcher.close()
    if as_json:
        _echo_json(result.model_dump())
        return
    from brain.answers import search_text

    click.echo(search_text(result), nl=False)
    click.echo(f"search: {result.mode}, {len(result.hits)} results; {result.index.chunks} chunks indexed", err=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)


@main.command()
@click.argument("question", required=False)
@click.option("--budget", type=click.IntRange(min=1), default=2000, show_default=True, metavar="TOKENS",
              help="Token budget of the packet (tokens estimated as characters / 3.5).")
@click.option("--reserve", type=click.IntRange(min=0), default=0, show_default=True, metavar="TOKENS",
              help="Tokens kept free for the agent's answer, out of the budget.")
@click.option("--questions", "questions_file", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help='JSON lines of {"id", "question"}: one packet per line, printed as one JSON line each.')
@click.option("--now", "now", type=click.DateTime(["%Y-%m-%d"]), default=None, metavar="DATE",
              help="The day cards' freshness is measured from (default: today).")
@embedder_option
@brain_option
@json_option
def context(question: str | None, budget: int, reserve: int, questions_file: Path | None, now, embedder: str | None,
            brain_path: str | None, as_json: bool) -> None:
    """Print the context packet for a question, within a token budget.

    Lanes, in order: guide and rules, the index (trimmed), page statements, memory cards, raw
    evidence turns (with their dates). Every admitted and rejected item has its reason and token
    count in --json (schema: docs/context.md). With --questions, one JSON line per question.
    """
    import datetime as dt

    if (question is None) == (questions_file is None):
        raise BrainError("give either a QUESTION or --questions FILE", "e.g. brain context 'Where is the workshop?' --budget 1000")
    from brain.context import ContextBuilder, ContextOptions, read_questions, render_packet
    from brain.search import Searcher

    root = root_of(brain_path)
    builder = ContextBuilder(root, Searcher.open(root, embedder=embedder_name(root, embedder)))
    options = ContextOptions(budget=budget, reserve=reserve, now=now.date() if now else dt.date.today())
    if questions_file is None:
        packet = builder.build(question, options)
        click.echo(packet.model_dump_json(indent=2) if as_json else render_packet(packet), nl=as_json)
        return
    asked, problems = read_questions(questions_file)
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    for qid, text in asked:
        packet = builder.build(text, options)
        click.echo(json.dumps({"id": qid, **packet.model_dump()}, ensure_ascii=False))


def _summary(errors: int, warnings: int, files: int) -> str:
    def count(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    found = f"{count(errors, 'error')}, {count(warnings, 'warning')}" if errors or warnings else "no problems"
    return f"{found} in {count(files, 'file')}"


for _command in (mcp, serve, hook, install):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(prog_name="brain"))

