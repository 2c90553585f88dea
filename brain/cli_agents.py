"""`brain` faces beyond the terminal: the MCP server, the web view, Claude Code's hooks and installing them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from brain.cli_options import brain_option, embedder_name, embedder_option, root_of


@click.command()
@embedder_option
@brain_option
def mcp(embedder: str | None, brain_path: str | None) -> None:
    """Serve the Brain to agents over the Model Context Protocol (stdio).

    Read-only. Tools: search, context, show, cite, links, recent, index; the index is also the
    resource brain://index. Register it with an MCP client as the command `brain mcp --brain PATH`.
    """
    from brain.mcp_server import build_server

    root = root_of(brain_path)
    build_server(root, embedder_name(root, embedder)).run("stdio")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The view has no login: keep it on loopback unless you mean to share the Brain.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="Port to listen on.")
@embedder_option
@brain_option
def serve(host: str, port: int, embedder: str | None, brain_path: str | None) -> None:
    """Serve a read-only web view of the Brain at http://HOST:PORT/ (opens no browser).

    Views: Home (the index, the last runs, counts), pages with clickable [[links]] and [cite:N]
    (the cited turns inside their session), sessions, the graph of pages, search, and the context
    inspector (the packet an agent gets, item by item). GET only; nothing writes. Ctrl-C stops it.
    """
    import uvicorn

    from brain.web.app import LOOPBACK, build_app

    root = root_of(brain_path)
    hosts = (*LOOPBACK, host) if host in LOOPBACK else ("*",)  # off loopback, the owner chose who may ask
    app = build_app(root, embedder_name(root, embedder), hosts=hosts)
    click.echo(f"brain serve: http://{host}:{port}/ ({root}); Ctrl-C stops it", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@click.group()
def hook() -> None:
    """Hooks that Claude Code runs (installed by `brain install claude-code`)."""


@hook.command("session-start")
@click.option("--budget", type=click.IntRange(min=100), default=2000, show_default=True, metavar="TOKENS")
@brain_option
def session_start(budget: int, brain_path: str | None) -> None:
    """Print the context a Claude Code session starts with (the session's JSON on stdin).

    The project page of the session's folder first, then the index, within the budget, as
    `hookSpecificOutput.additionalContext`. Fails open: any problem prints one line on stderr and
    exits 0, and the session starts without it.
    """
    try:
        from brain.claude_code import session_start_context

        raw = sys.stdin.read() if not sys.stdin.isatty() else ""
        payload = json.loads(raw) if raw.strip() else {}
        text = session_start_context(root_of(brain_path), payload if isinstance(payload, dict) else {}, budget)
    except Exception as exc:  # noqa: BLE001 - a hook must never stop a session from starting
        click.echo(f"brain: no memory for this session: {exc}", err=True)
        return
    click.echo(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}))


@click.command()
@click.argument("client", type=click.Choice(["claude-code"]))
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="user: ~/.claude/settings.json and ~/.claude.json; project: .claude/settings.json and .mcp.json here.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The hooks settings file to change instead (tests).")
@click.option("--mcp-config", "mcp_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The MCP servers file to change instead (tests).")
@click.option("--uninstall", is_flag=True, help="Remove what install added.")
@brain_option
def install(client: str, scope: str, settings_file: Path | None, mcp_file: Path | None, uninstall: bool,
            brain_path: str | None) -> None:
    """Connect Claude Code to the Brain: a SessionStart hook (its memory for the session), a
    SessionEnd hook (the transcript into sessions/raw/ for the nightly `dream run`), and the MCP server.

    Other settings and hooks are kept; running it twice changes nothing the second time; each file
    changed is first copied to <file>.brain-backup.
    """
    from brain.claude_code import install as merge
    from brain.claude_code import settings_paths

    root = root_of(brain_path).resolve()
    settings, servers = settings_paths(scope, Path.home(), Path.cwd())
    changed = merge(settings_file or settings, mcp_file or servers, root, uninstall=uninstall)
    for path in changed:
        click.echo(f"{'updated' if not uninstall else 'cleaned'} {path}")
    if not changed:
        click.echo("nothing to change: already " + ("removed" if uninstall else "installed"))
