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


class _Failed(click.ClickException):
    """Renders as one line on stderr and exits 1 (cron mails it)."""

    def show(self, file=None) -> None:  # noqa: ARG002
        click.echo(f"dream: error: {self.message}", err=True)


def _guard(fn):
    """Library errors become one-line CLI failures; nothing else is caught.

    The error classes are imported only when something was raised: importing them here would pull
    pydantic in when the CLI loads, before `dream run` has started git's scan (brain.scan)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            from brain.errors import BrainError
            from dream.backends.base import BackendError

            if isinstance(exc, BrainError):
                raise _Failed(str(exc)) from None
            if isinstance(exc, BackendError):
                raise _Failed(f"{exc}" + (f" ({exc.hint})" if exc.hint else "")) from None
            raise

    return wrapper


@main.command("run")
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
@click.option("--backend", default=None, help="Model backend: offline, anthropic or openai (default: brain.toml [dream] backend, else anthropic when ANTHROPIC_API_KEY is set, else offline).")
@click.option("--model", default=None, help="Model name for a network backend (default: brain.toml [dream] model, else the backend's).")
@click.option("--dry-run", is_flag=True, help="Compile and check, but do not commit.")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@click.option("--max-sessions", type=click.IntRange(min=1), default=None, help="Process at most N pending sessions.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Token budget: stop before the next session once this many tokens are spent.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, help="Cost budget in USD, checked like --max-tokens.")
@click.option("--record", is_flag=True, help="Keep every model exchange in the run folder, for `dream replay`.")
@click.option("--now", default=None, help="The run's clock, ISO 8601 (default: $DREAM_NOW or the real time).")
@click.option("--run-id", default=None, help="Use this run id instead of deriving one from the clock and inputs.")
@click.option("-v", "--verbose", is_flag=True, help="Say what was done even on success, and where the time went (on stderr).")
@_guard
def run_command(brain, backend, model, dry_run, as_json, max_sessions, max_tokens, max_cost, record, now, run_id, verbose) -> None:
    """Compile new and grown sessions into the Brain as one git commit."""
    from brain.scan import WorktreeScan

    root = _brain_root(brain)
    scan = WorktreeScan(root, walk=True, head=True, serve=True)  # git stats every file, a child lists them, while the modules below are imported
    try:
        from dream.backends import get_backend
        from dream.run import run
        from dream.settings import load_settings

        settings = load_settings(
            root, backend=backend, now=now, run_id=run_id, max_sessions=max_sessions, dry_run=dry_run,
            model=model, max_tokens=max_tokens, max_cost=max_cost, record=record,
        )
        if settings.backend != "offline" and settings.backend_reason.startswith("default"):
            # Nobody chose a paying backend: say so, once per run (set [dream] backend to silence it).
            click.echo(f"dream: using backend {settings.backend} ({settings.backend_reason}; choose with --backend or [dream] backend)", err=True)
        backend = get_backend(settings.backend, settings.llm)
        if settings.max_cost is not None and backend.usage().cost_usd is None:
            raise _Failed(f"no price is known for the model {backend.model}, so --max-cost cannot be enforced (set [dream] price_in and price_out in brain.toml, or use --max-tokens)")
        report = run(settings, backend, scan)
    finally:
        scan.close()  # its git commands, when the run stopped before reading them
    if verbose and report.timings is not None and report.status != "nothing-to-do":
        click.echo(f"dream: {report.timings.line()}", err=True)  # stderr: stdout stays the report
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    elif verbose or dry_run or not report.ok or report.rejected or report.conflicts or report.session_failures:
        click.echo(report.text(verbose=verbose or dry_run))
    elif report.problems:
        # Quiet on success, but bad input is always said (cron mails stderr).
        for problem in report.problems:
            click.echo(f"dream: warning: {problem}", err=True)
    if not report.ok:
        raise _Failed(report.reason or "run failed")


@main.command("replay")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
@click.option("--into", type=click.Path(file_okay=False, path_type=Path), default=None, help="Replay into this new folder and keep it (default: a temporary folder).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@_guard
def replay_command(run_id: str, brain, into: Path | None, as_json: bool) -> None:
    """Re-run a run recorded with `dream run --record`, from its records and with no network.

    The Brain is cloned at the commit the run started from; the tree the replay commits must equal
    the recorded commit's tree byte for byte. Exits non-zero when it differs.
    """
    from dream.record import replay

    result = replay(_brain_root(brain), run_id, into)
    click.echo(result.model_dump_json(indent=2) if as_json else result.text())
    if not result.identical:
        raise _Failed(f"replay of {run_id} differs from the recorded run")


@main.command("status")
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@_guard
def status_command(brain, as_json) -> None:
    """List the last runs and the sessions waiting for the next one."""
    from dream.status import status

    info = status(_brain_root(brain))
    click.echo(info.model_dump_json(indent=2) if as_json else info.text())


@main.command("demo")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--now", default="2026-07-15T02:00:00Z", show_default=True, help="The run's clock (fixed, so the demo is reproducible).")
@_guard
def demo_command(dest: Path, now: str) -> None:
    """Create a Brain at DEST from the bundled Nadia sessions and run Dream on it."""
    from dream.demo import make_demo

    report = make_demo(dest, now)
    click.echo(report.text(verbose=True))
    click.echo(f"\nBrain ready at {dest}. Try: brain --brain {dest} index")


def entry() -> None:
    """The `dream` command: `main`, then an exit that skips the interpreter's teardown.

    A full compile leaves a large heap (1.4 GB after 10,000 sessions) that Python would free object
    by object before exiting: ~3 s of a nightly run spent on nothing. By the time `main` returns,
    the run has closed its files, released its lock and waited for its helpers, so output is
    flushed and the process exits at once with main's status.

    The cyclic garbage collector is off for the whole process, not only during a run (which pauses
    it, dream.run): turning it back on after a run made the next allocation collect every object
    the run left alive, 0.08 s of a nightly run on the 10k Brain, for a heap the exit drops anyway.
    For the same short life, freed memory is kept for reuse (`_keep_freed_memory`), and pydantic
    looks for no plugins (brain.no_plugins).
    """
    import gc
    import os

    from brain.no_plugins import skip_pydantic_plugins

    gc.disable()
    _keep_freed_memory()
    skip_pydantic_plugins()
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if isinstance(code, str):  # sys.exit("message"): printed, status 1, as Python does
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`dream status | head`), a closed stream
            pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


#: glibc's mallopt parameters (malloc.h) and what they are set to: never give freed memory back to
#: the system (M_TRIM_THRESHOLD), grow the heap 64 MB at a time (M_TOP_PAD), and take blocks of any
#: size a run allocates from the heap rather than from a mapping of their own (M_MMAP_THRESHOLD).
_MALLOPT = ((-1, 512 << 20), (-2, 64 << 20), (-3, 512 << 20))


def _keep_freed_memory() -> None:
    """Let glibc's malloc keep and reuse what the process frees instead of returning it to the system.

    A nightly run reads and renders megabyte texts (state.json, sessions/index.md) several times
    over; by default each such block is mapped afresh and given back when freed, and every page of
    it faults again on first touch: 44,000 page faults in one run on the 10k Brain, 37,000 with
    this (the system time of the run's process 0.15 s → 0.13 s, the run ~0.02 s shorter). The
    process is short-lived, so what it keeps is returned at exit; a full compile's peak is unchanged
    (470 MB on 3,000 sessions either way). Elsewhere than glibc there is no mallopt: nothing to do."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError):
        return
    for param, value in _MALLOPT:
        mallopt(param, value)


if __name__ == "__main__":  # pragma: no cover
    entry()
