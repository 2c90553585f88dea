"""Claims in staged files: judged in batches, removed by the verifier policy, withdrawn with a failed page.

The gate asks the backend about each *new or changed* claim only (one whose text is not in the
live version of its file: what landed before was checked then, and the owner's own text is never
judged), a page's claims in one call, a topic's notes in one call with their page as context.
Unsupported claims are cut out of the staged text (`remove_claims`); the live tree is untouched.
"""

from __future__ import annotations

import re

from brain import layout
from brain.page import parse_page, render_page
from brain.errors import PageError
from dream.backends.base import BackendError, ModelBackend, VerifyRequest
from dream.text.facts import OWNER_ALIASES
from validators.verifier import ClaimVerdict, claims_of, evidence_for

_CITE_RE = re.compile(r"\[cite:(\d+)\]")


def _group(path: str) -> tuple[str, str | None]:
    """(batch key, path of the page the claims land on): a topic's notes are judged together."""
    if layout.is_note_path(path):
        topic = path.split("/")[1]
        return f"{layout.NOTES}/{topic}/", topic
    return path, None


def judge_claims(view, staged, paths: list[str], backend: ModelBackend,
                 owner: str | None = None) -> tuple[dict[str, list[ClaimVerdict]], dict[str, str]]:
    """Verdicts for the new or changed claims of `paths` (staged files), asked in batches; and the
    paths whose batch the backend could not judge (path → why), which must not land unverified.
    `view`: the staged tree over the live one (BrainView.staged), whose `below` is the live view."""
    verdicts: dict[str, list[ClaimVerdict]] = {p: [] for p in paths}
    failed: dict[str, str] = {}
    batches: dict[str, list[tuple[str, object, VerifyRequest]]] = {}
    page_paths = {layout.page_location(p)[1]: p for p in view.page_paths} if any(layout.is_note_path(p) for p in paths) else {}
    contexts: dict[str, str] = {}  # topic → the body of its page, the context of its notes' claims
    for path in paths:
        page = view.doc(path)
        if page is None:
            continue
        before = view.below.doc(path) if view.below is not None else None
        old = {c.text for c in claims_of(before)} if before is not None else set()
        key, topic = _group(path)
        context = page.body
        if topic is not None:
            context = contexts.get(topic)
            if context is None:  # once per topic: its page may be large, and a topic may hold 40,000 notes
                target = view.doc(page_paths[topic]) if topic in page_paths else None
                context = contexts[topic] = target.body if target is not None else ""
        for claim in claims_of(page):
            if claim.text in old:
                continue
            evidence = [_as_owner(text, owner) for text in evidence_for(view, page, claim.cites)]
            req = VerifyRequest(claim=claim.text, evidence=evidence, context=context)
            batches.setdefault(key, []).append((path, claim, req))
    fatal: str | None = None
    for key in sorted(batches):
        items = batches[key]
        try:
            if fatal:
                raise BackendError(fatal)
            answers = backend.verify_claims([req for _, _, req in items])
        except BackendError as exc:
            fatal = str(exc) if exc.fatal else fatal  # no more calls after a refused key
            for path, _, _ in items:
                failed[path] = f"the verifier failed: {exc}"
                verdicts.pop(path, None)
            continue
        for (path, claim, _), v in zip(items, answers):
            if path in verdicts:
                verdicts[path].append(ClaimVerdict(path=path, line=claim.line, claim=claim.text, label=v.label, score=v.score, reason=v.reason))
    return verdicts, failed


def _as_owner(evidence: str, owner: str | None) -> str:
    """'user: I live in Lisbon' as the owner said it: the page says 'Dain lives in Lisbon'."""
    who, sep, said = evidence.partition(": ")
    return f"{owner}: {said}" if owner and sep and who.lower() in OWNER_ALIASES else evidence


def remove_claims(text: str, path: str, claims: list[str]) -> str | None:
    """`text` without `claims` (bullets go whole, sentences go from their paragraph), sources renumbered
    to what is still cited. None when nothing cited is left (a note: its one fact is gone)."""
    lines = text.split("\n")
    for claim in claims:
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped == claim:
                lines[i] = None  # type: ignore[call-overload]
                break
            if claim in line:
                indent = line[: len(line) - len(line.lstrip())]
                rest = re.sub(r"\s{2,}", " ", line.strip().replace(claim, "", 1)).strip()
                lines[i] = indent + rest if rest else None  # type: ignore[call-overload]
                break
        lines = [ln for ln in lines if ln is not None]
    try:
        page = parse_page(_drop_empty_sections("\n".join(lines)), path)
    except PageError:
        return None
    if not _CITE_RE.search(page.body):
        return None
    used = {int(n) for n in _CITE_RE.findall(page.body)}
    sources = {n: t for n, t in page.frontmatter.sources.items() if n in used}
    return render_page(page.with_changes(frontmatter=page.frontmatter.model_copy(update={"sources": sources})))


def _drop_empty_sections(text: str) -> str:
    """A `## Heading` left with nothing under it goes too."""
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("## "):
            nxt = next((ln for ln in lines[i + 1 :] if ln.strip()), None)
            if nxt is None or nxt.startswith("#"):
                continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).rstrip("\n") + "\n"


def withdraw(comp, sessions: dict, paths: list[str]) -> list[tuple[str, str]]:
    """Take back what this run staged for files that cannot land (a page whose write failed, a file
    the verifier could not judge): the page, the notes of its topic and the notes that mention it
    (links to a new page become text). Returns (session id, path) for each processed session whose
    facts were taken back: the run keeps it pending, so the next run makes those notes, and with
    them the page, again (re-attaching a fact that already has its note would change nothing)."""
    fed: list[tuple[str, str]] = []
    for path in sorted(set(paths)):
        if layout.is_summary_path(path):
            sid = path.rsplit("/", 1)[1][:-3]
            fed += [(sid, path)] if sid in sessions else []
            continue
        if layout.is_note_path(path):
            slug = path.split("/")[1]
        elif layout.is_page_path(path):
            slug = layout.page_location(path)[1]
        else:
            continue
        sids: set[str] = set()
        for topic, notes in sorted(comp.topics.items()):
            for note_path, note in sorted(notes.notes.items()):
                if comp.staged.has(note_path) and (topic == slug or slug in note.mentions):
                    targets = [*note.sources, *([note.superseded_by] if note.superseded_by else [])]
                    sids |= {t.split("#")[0].removeprefix("session:") for t in targets} & set(sessions)
                    comp.staged.drop(note_path)
        page = comp.page_path(slug)
        if page:
            comp.staged.drop(page)
            if not comp.staged.base.exists(page):
                # A `## Related` bullet that is only the link goes; other links become their text.
                related = re.compile(r"^- \[\[" + re.escape(slug) + r"(?:\|[^\]]*)?\]\]\n", re.M)
                for other, text in comp.staged.written.items():
                    if other.endswith(".md") and related.search(text):
                        comp.staged.write(other, related.sub("", text))
                unlink_everywhere(comp.staged, slug)
        fed += [(sid, path) for sid in sorted(sids)]
    return fed


def unlink_everywhere(staged, slug: str) -> None:
    """Links to a page that will not exist become their text."""
    pattern = re.compile(r"\[\[" + re.escape(slug) + r"(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
    for path, text in staged.written.items():
        if path.endswith(".md") and f"[[{slug}" in text:
            staged.write(path, pattern.sub(lambda m: m.group(1) or slug, text))
