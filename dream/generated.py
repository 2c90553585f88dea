"""The files a run generates from the staged tree over the live one: both indexes, the log, forget.md, state.json."""

from __future__ import annotations

from brain import layout
from brain.render import render_knowledge_index_lines, render_sessions_index_lines
from brain.repo import blob_id
from brain.scaffold import merged_ignore
from brain.tree import text_if_exists
from brain.view import BrainView
from dream.compile import Compilation
from dream.report import RunReport


def write_generated(comp: Compilation, report: RunReport, with_state: bool) -> None:
    """knowledge/index.md, sessions/index.md, knowledge/log.md and forget.md into the staged tree;
    state.json too `with_state` (the final time only: no check reads it). A .gitignore Dream has
    never written gets the patterns of `brain init`'s it lacks (raw sessions, runs): once, so an
    owner who takes one out later keeps it out."""
    staged = comp.staged
    if ".gitignore" not in comp.state.written and (ignore := merged_ignore(staged.read(".gitignore") or "")) is not None:
        staged.write(".gitignore", ignore)
    view = BrainView.staged(comp.view, staged.tree())
    staged.write(layout.KNOWLEDGE_INDEX, render_knowledge_index_lines(view.page_lines()))
    staged.write(layout.SESSIONS_INDEX, render_sessions_index_lines(view.summary_entries()))
    staged.write(layout.KNOWLEDGE_LOG, _log_text(comp, report))
    if comp.forgotten:
        forget = staged.read(layout.FORGET) or "# Forget\n\n"
        for slug in comp.forgotten:
            line = f"- {comp.settings.now.date().isoformat()}: {slug} — deleted by the owner"
            if f": {slug} " not in forget:
                forget = forget.rstrip("\n") + "\n" + line + "\n"
        staged.write(layout.FORGET, forget)
    if with_state:
        for path, own in comp.own.items():
            if path in report.rejected:  # a rejected file did not change: its base stays
                continue
            if own is None:
                comp.state.merge_bases.pop(path, None)
            else:
                comp.state.merge_bases[path] = own
        written = {path: blob_id(text.encode("utf-8")) for path, text in staged.written.items() if not layout.is_state_path(path)}
        staged.write(layout.STATE, comp.state.render(last_run=comp.run_id, written=written))


def _log_text(comp: Compilation, report: RunReport) -> str:
    previous = text_if_exists(comp.staged.base, layout.KNOWLEDGE_LOG) or "# Log\n"
    head, _, rest = previous.partition("\n")
    sessions = report.sessions
    entry = [
        f"## {comp.settings.now.date().isoformat()} · run {comp.run_id}",
        f"- sessions: {len(sessions)} ({', '.join(sessions)})" if sessions else "- sessions: 0",
        f"- pages: {len(report.pages_created)} created, {len(report.pages_updated)} updated, {len(report.rejected)} rejected",
        f"- verifier: {report.verifier_line()}",
        f"- backend: {report.backend}{f' ({report.model})' if report.model else ''}; tokens: {report.tokens_line()}",
    ]
    entry += [f"- conflict: {c}" for c in comp.conflicts]
    body = rest.lstrip("\n")
    return f"{head or '# Log'}\n\n" + "\n".join(entry) + "\n" + (f"\n{body}" if body else "")
