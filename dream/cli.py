"""`dream` CLI: thin commands — parse, load, call one function, render."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import click

from brain.cli_options import embedder_option, json_option


@click.group()
@click.version_option(package_name="brain-dream")
def main() -> None:
    """Dream compiles raw agent sessions into a Brain (a git repo of markdown)."""


def _brain_root(brain: str | None) -> Path:
    return Path(brain or os.environ.get("BRAIN_HOME") or ".").resolve()


@main.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["jsonl", "claude-code", "chatgpt", "locomo", "longmemeval"]))
@click.argument("path", type=click.Path(exists=True, path_type=Path), required=False)
@click.option("--project", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="claude-code: one project folder (default: every project under ~/.claude/projects).")
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
def import_command(fmt: str, path: Path | None, project: Path | None, brain: str | None, as_json: bool) -> None:
    """Import sessions from PATH in FORMAT into sessions/raw/ as canonical jsonl.

    claude-code needs no PATH: it reads every project under ~/.claude/projects
    ($CLAUDE_CONFIG_DIR/projects when set), or the one given with --project.
    """
    from dream.importers import import_path
    from dream.importers.claude_code import projects_home

    if fmt == "claude-code":
        path = path or project or projects_home()
        if not path.exists():
            raise _Failed(f"{path}: no Claude Code projects here; pass a folder with --project")
    elif path is None:
        raise click.UsageError(f"{fmt} needs a PATH")

    with _Bar("sessions") as bar:
        report = import_path(fmt, path, _brain_root(brain), progress=bar)
    click.echo(report.model_dump_json(indent=2) if as_json else report.summary())
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    if report.read_nothing:
        raise _Failed(f"nothing could be imported from {path}; see the warnings above")


class _Bar:
    """A progress bar on stderr while someone watches (a TTY); nothing at all under cron or a pipe.
    Called as a `dream.timing.Progress`: (phase, done, total), total 0 when only the phase changed."""

    def __init__(self, unit: str, file=None) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=0, desc="dream", unit=unit, file=file or sys.stderr, disable=None, leave=False, dynamic_ncols=True,
                        bar_format="{desc}: {n_fmt}/{total_fmt} {unit} |{bar}| {elapsed}")

    def __call__(self, phase: str, done: int, total: int) -> None:
        if total:
            self.bar.total, self.bar.n = total, done
        self.bar.set_description_str(f"dream {phase}")

    def __enter__(self) -> "_Bar":
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()  # leave=False: the bar is wiped, so what is printed next starts clean


class _Failed(click.ClickException):
    """Renders as one line on stderr and exits 1 (cron mails it)."""

    def show(self, file=None) -> None:  # noqa: ARG002
        click.echo(f"dream: error: {self.message}", err=True)


def _guard(fn):
    """Library errors become one-line CLI failures; nothing else is caught."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from brain.errors import BrainError
        from dream.backends.base import BackendError

        try:
            return fn(*args, **kwargs)
        except BrainError as exc:
            raise _Failed(str(exc)) from None
        except BackendError as exc:
            raise _Failed(f"{exc}" + (f" ({exc.hint})" if exc.hint else "")) from None

    return wrapper


@main.command("run")
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
@click.option("--backend", default=None, help="Model backend: offline, anthropic or openai (default: brain.toml [dream] backend, else anthropic when ANTHROPIC_API_KEY is set, else offline).")
@click.option("--model", default=None, help="Model name for a network backend (default: brain.toml [dream] model, else the backend's).")
@click.option("--dry-run", is_flag=True, help="Compile and check, but do not commit.")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@click.option("--max-sessions", type=click.IntRange(min=1), default=None, help="Process at most N pending sessions.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Token budget: no model call is sent that could take the run past it; the rest stays pending.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, help="Cost budget in USD, a hard limit like --max-tokens.")
@click.option("--record", is_flag=True, help="Keep every model exchange in the run folder, for `dream replay`.")
@click.option("--now", default=None, help="The run's clock, ISO 8601 (default: $DREAM_NOW or the real time).")
@click.option("--run-id", default=None, help="Use this run id instead of deriving one from the clock and inputs.")
@click.option("-v", "--verbose", is_flag=True, help="Say what was done even on success, and where the time went (on stderr).")
@_guard
def run_command(brain, backend, model, dry_run, as_json, max_sessions, max_tokens, max_cost, record, now, run_id, verbose) -> None:
    """Compile new and grown sessions into the Brain as one git commit."""
    from dream.backends import get_backend
    from dream.run import run
    from dream.settings import RunFlags, load_settings

    flags = RunFlags(backend=backend, now=now, run_id=run_id, max_sessions=max_sessions, dry_run=dry_run, model=model,
                     max_tokens=max_tokens, max_cost=max_cost, record=record)
    settings = load_settings(_brain_root(brain), flags)
    if settings.backend != "offline" and settings.backend_reason.startswith("default"):
        # Nobody chose a paying backend: say so, once per run (set [dream] backend to silence it).
        click.echo(f"dream: using backend {settings.backend} ({settings.backend_reason}; choose with --backend or [dream] backend)", err=True)
    backend = get_backend(settings.backend, settings.llm)
    if settings.max_cost is not None and backend.usage().cost_usd is None:
        raise _Failed(f"no price is known for the model {backend.model}, so --max-cost cannot be enforced (set [dream] price_in and price_out in brain.toml, or use --max-tokens)")
    with _Bar("sessions") as bar:
        report = run(settings, backend, progress=bar)
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
    if report.rejected:  # the rest landed, but cron must hear that something did not
        raise _Failed(f"the gate rejected {len(report.rejected)} file(s) (listed above with why); the rest is committed")


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
    from dream.replay import replay

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
    click.echo(f"\nBrain ready at {dest}. Try: brain index --brain {dest}")


@main.command(name="eval")
@click.argument("benchmark", type=click.Choice(["locomo", "longmemeval"]))
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--budgets", default="500,1000,2000", show_default=True, metavar="TOKENS,…", help="Packet budgets to measure.")
@click.option("--backend", default="offline", show_default=True, help="Dream backend that compiles the Brains.")
@click.option("--model", default=None, metavar="NAME", help="Model of the compiling --backend (default: the backend's own).")
@click.option("--base-url", default=None, metavar="URL", help="Server of the compiling --backend (openai: e.g. http://localhost:11434/v1).")
@click.option("--answer", "answer", default=None, metavar="BACKEND",
              help="Also answer each question from each packet and judge the answer with this backend (offline, anthropic, openai).")
@click.option("--answer-budgets", default=None, metavar="TOKENS,…", help="Answer at these of the --budgets only (default: all).")
@click.option("--answer-model", default=None, metavar="NAME", help="Model of the --answer backend (default: the backend's own).")
@click.option("--answer-base-url", default=None, metavar="URL", help="Server of the --answer backend (openai: e.g. http://localhost:11434/v1).")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the compiled Brains here (default: a temporary folder, removed after).")
@click.option("--reuse", is_flag=True, help="Measure Brains already compiled in --workdir instead of compiling them again.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N questions.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="PREFIX",
              help="Also write PREFIX.json and PREFIX.md.")
@embedder_option
@json_option
@_guard
def eval_(benchmark: str, file: Path, budgets: str, backend: str, model: str | None, base_url: str | None,
          answer: str | None, answer_budgets: str | None,
          answer_model: str | None, answer_base_url: str | None, workdir: Path | None, reuse: bool, limit: int | None,
          save: Path | None, embedder: str | None, as_json: bool) -> None:
    """Measure context packets on LoCoMo or LongMemEval.

    Imports FILE into temporary Brains, compiles them with Dream, builds a packet per question
    at each budget and reports per category: evidence recall, the share of questions with all
    their evidence, and whether the answer string is in the packet. Two baselines run at the
    same budgets: BM25 over raw turns (date prepended) and the Brain without knowledge/.
    With --answer, each packet of a question with a gold answer is also answered and judged
    by that backend: judged accuracy and token F1 per system (offline: an extractive reader
    and a lexical judge, a rough proxy). Prints a markdown table (or --json); a progress bar
    runs on stderr.
    """
    from dream.backends.base import NeedsKeyError
    from dream.eval.harness import EvalOptions, render_markdown, run_eval, steps
    from dream.settings import LLMOptions

    sizes = _budgets(budgets, "--budgets")
    answered = _budgets(answer_budgets, "--answer-budgets") if answer_budgets else sizes
    if set(answered) - set(sizes):
        raise click.BadParameter(f"{answer_budgets} must be among --budgets {budgets}", param_hint="--answer-budgets")
    answer_options = LLMOptions(model=answer_model, base_url=answer_base_url)
    total = steps(benchmark, file, limit, len(answered) if answer else 0)
    try:
        with click.progressbar(length=total, label=f"eval {benchmark}", file=sys.stderr) as bar:
            options = EvalOptions(budgets=sizes, backend=backend, backend_options=LLMOptions(model=model, base_url=base_url),
                                  embedder=embedder or "auto", workdir=workdir, reuse=reuse, limit=limit, answer=answer,
                                  answer_options=answer_options, answer_budgets=answered)
            report = run_eval(benchmark, file, options, progress=lambda n, _label: bar.update(n))
    except NeedsKeyError as exc:
        raise _Failed(f"{exc} (set {exc.env}, or use the offline backend)") from None
    table = render_markdown(report)
    if save:
        Path(f"{save}.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        Path(f"{save}.md").write_text(table, encoding="utf-8")
    click.echo(report.model_dump_json(indent=2) if as_json else table, nl=as_json)


def _budgets(text: str, flag: str) -> tuple[int, ...]:
    try:
        return tuple(int(b) for b in text.split(",") if b.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: write token budgets as numbers separated by commas, e.g. 500,1000", param_hint=flag) from None


@main.group()
def hook() -> None:
    """Hooks that Claude Code runs (installed by `brain install claude-code`)."""


@hook.command("session-end")
@click.option("--brain", "brain", type=click.Path(file_okay=False), default=None, help="Brain folder (default: $BRAIN_HOME or .).")
def session_end(brain: str | None) -> None:
    """Import the transcript of the Claude Code session that ended (its JSON on stdin:
    transcript_path, session_id, cwd) into sessions/raw/; the nightly `dream run` compiles it.

    Fast and idempotent (a transcript imported twice is imported once); fails open: a problem is
    one line on stderr and exit 0, so the session ends normally.
    """
    import json

    try:
        from dream.importers import import_path

        payload = json.loads(sys.stdin.read() or "{}")
        transcript = Path(str(payload["transcript_path"])).expanduser()
        report = import_path("claude-code", transcript, _brain_root(brain))
    except Exception as exc:  # noqa: BLE001 - a hook must never stop a session from ending
        click.echo(f"dream: this session was not saved to the Brain: {exc}", err=True)
        return
    for problem in report.problems:
        click.echo(f"dream: {problem}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
