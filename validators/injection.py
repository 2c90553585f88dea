"""Injected instructions and hidden characters: `injection_spans(text)`, `strip_invisible(text)`.

Used by the X002-X005 checks and reusable by the compiler. Quoting convention: a blockquote
callout whose first line is `> [!untrusted]` holds quoted, flagged material; phrase and comment
checks skip it, invisible characters are reported anyway (a quote is safe to show only if what
is shown is what is there). Patterns favour precision over recall: ordinary prose such as
"from now on, Nadia works from Kyoto" or "Nadia sends the report to x@y.z" must not match.
"""

from __future__ import annotations

import re

from brain.invisible import invisible_spans
from brain.patterns import Gate, LazyPattern, Span, disjoint, gate_open

_F = re.I | re.M
_SENSITIVE_OBJECT = LazyPattern(
    r"\b(?:passwords?|credentials?|api\s+keys?|keys|tokens?|secrets?|everything|all\b|conversations?|chats?|"
    r"history|transcripts?|memor(?:y|ies)|the\s+user'?s?|user\s+data|(?:personal|private)\s+(?:data|information|details)|"
    r"contents?\s+of|this\s+(?:page|document|file|conversation|chat|session)|system\s+prompt|instructions|"
    r"(?:e-?mails|contacts|files|notes)\s+of)\b",
    re.I,
)
_AI = r"(?:AI|LLM|assistant|agent|model|language\s+model|Claude|ChatGPT|GPT(?:-?\d\w*)?|chatbot|bot|copilot)s?"
_VERBS = ("send", "mail", "forward", "post", "upload", "transmit", "leak", "exfiltrate", "share", "copy", "submit")
# (kind, pattern, gate on the lower-cased text with single spaces); the span is the whole match.
_PHRASES: list[tuple[str, LazyPattern, Gate]] = [
    (
        "override",
        LazyPattern(
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:\w+\s+){0,3}?(?:all\s+|any\s+)?"
            r"(?:previous|prior|above|earlier|preceding|former|original|initial|your|system|safety|these|those)\s+"
            r"(?:\w+\s+){0,2}?(?:instructions?|rules|directives?|guidelines|prompts?|guardrails|constraints|policies|"
            r"restrictions|programming)\b",
            _F,
        ),
        (("ignore", "disregard", "forget", "override", "bypass"),),
    ),
    (
        "override",
        LazyPattern(
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+|the\s+)*"
            r"(?:above\b(?!\s+\d)|(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+had)\s+(?:been\s+)?(?:told|given|instructed))",
            _F,
        ),
        (("ignore", "disregard", "forget"),),
    ),
    (
        "role",
        LazyPattern(r"\byou\s+(?:must|should|will|shall)\s+now\b", _F),
        (("must now", "should now", "will now", "shall now"),),
    ),
    (
        "role",
        LazyPattern(
            r"\bfrom\s+now\s+on\b,?\s+(?:you\s+(?:must|should|will|shall|are|always|never|only)\b|always\b|never\b|only\b|"
            r"(?:respond|reply|answer|act|pretend|ignore)\b|do\s+not\b|don'?t\b)",
            _F,
        ),
        (("from now on",),),
    ),
    (
        "role",
        LazyPattern(
            r"\byou\s+are\s+now\s+(?:an?\s+|the\s+|in\s+|my\s+)?(?:\w+\s+){0,2}?"
            r"(?:DAN|mode|unrestricted|jailbroken|uncensored|no\s+longer|free\s+of)\b",
            _F,
        ),
        (("you are now",),),
    ),
    (
        "role",
        LazyPattern(r"\b(?:new|updated|revised|real|actual)\s+(?:system\s+)?instructions?\s*:", _F),
        (("instruction",),),
    ),
    (
        "role",
        LazyPattern(
            r"\b(?:enable|enter|activate|switch\s+to|turn\s+on)\s+"
            r"(?:developer|dev|god|admin|jailbreak|DAN|unrestricted|debug)\s+mode\b",
            _F,
        ),
        (("mode",), ("enable", "enter", "activate", "switch to", "turn on")),
    ),
    ("role", LazyPattern(r"\bdo\s+anything\s+now\b", _F), (("do anything now",),)),
    (
        "role",
        LazyPattern(
            r"\b(?:pretend|act|behave)\s+(?:to\s+be\s+|as\s+(?:if\s+you\s+(?:are|were)\s+)?|you\s+are\s+)(?:an?\s+)?"
            r"(?:unrestricted|unfiltered|jailbroken|uncensored|evil)\b",
            _F,
        ),
        (("unrestricted", "unfiltered", "jailbroken", "uncensored", "evil"),),
    ),
    (
        "role",
        LazyPattern(
            rf"\b(?:(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:any\s+|all\s+|the\s+)?(?:AI\s+|LLM\s+)?{_AI}\s*[:,\u2014-]"
            rf"|if\s+you\s+are\s+an?\s+(?:AI|LLM|language\s+model|assistant|agent|bot|chatbot)\b"
            rf"|\b{_AI}\s+(?:reading|processing|summari[sz]ing|parsing|ingesting)\s+this\b)",
            _F,
        ),
        (("note to", "note for", "message to", "message for", "instruction", "reminder to", "reminder for",
          "if you are a", "reading this", "processing this", "summarising this", "summarizing this",
          "parsing this", "ingesting this"),),
    ),
    (
        "system-prompt",
        LazyPattern(
            r"\b(?:(?:your|the\s+(?:assistant|agent|model|ai)'?s|hidden|secret|original|real|new|updated|full)\s+system\s+prompt\b"
            r"|(?:reveal|print|show|output|repeat|leak|dump|display|disclose|override|replace|ignore)\s+(?:\w+\s+){0,3}?"
            r"(?:system\s+prompt|(?:initial|hidden|original)\s+instructions)\b"
            r"|system\s+prompt\s*:)",
            _F,
        ),
        (("system prompt", "initial instructions", "hidden instructions", "original instructions"),),
    ),
    (
        "system-prompt",
        LazyPattern(r"<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?INST\]|<</?SYS>>|</?system>", re.I),
        (("<|", "inst]", "<<sys", "sys>>", "system>"),),
    ),
    (
        "exfiltration",
        # An imperative: the verb starts a line, a list item or a sentence, or follows "please",
        # "then", … (checked by _imperative); "Nadia sends the report to x@y.z" is not one.
        LazyPattern(
            r"\b(?P<verb>send|e-?mail|forward|post|upload|transmit|leak|exfiltrate|share|copy|submit)\s+"
            r"(?P<obj>[^\n]{0,100}?)\s+to\s+<?(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[^\s)>\]]+)",
            _F,
        ),
        (_VERBS, ("@", "http")),
    ),
    (
        "exfiltration",
        LazyPattern(r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\s]*(?:\{|%7B|\$)[^)\s]*\)", re.I),
        (("](",),),
    ),
]
_IMPERATIVE_BEFORE = LazyPattern(
    r"(?:^[ \t>]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?|[.!?:;][ \t]+|\b(?:please|immediately|silently|quietly|secretly|now|and|then)[ \t]+)\Z",
    re.I,
)


def _imperative(text: str, start: int) -> bool:
    """True when the verb at `start` opens a command (line, list item, sentence, "please …")."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_IMPERATIVE_BEFORE.search(text[max(line_start, start - 60) : start]))


_COMMENT = LazyPattern(r"<!--([\s\S]*?)(?:-->|\Z)")
_DIRECTIVE_IN_COMMENT = LazyPattern(
    rf"^\s*(?:always|never|ignore|disregard|forget|you\s+(?:must|should|will|are))\b"
    rf"|^\s*(?:do\s+not|don'?t)\s+(?:tell|mention|reveal|say|disclose|inform|show|let)\b"
    rf"|\b{_AI}\b[\s\S]{{0,80}}?\b(?:must|should|shall|always|never|ignore|tell|say|reply|respond|"
    rf"output|send|pretend|obey|follow|reveal)\b"
    rf"|\b(?:must|should|always|never|ignore|tell|say|reply|respond|obey|follow|reveal)\b[\s\S]{{0,80}}?\b{_AI}\b",
    re.I,
)
_UNTRUSTED_START = LazyPattern(r"^[ \t]*>[ \t]*\[!untrusted\][-+]?", re.I)
_QUOTE_LINE = LazyPattern(r"^[ \t]*>")


def untrusted_regions(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `> [!untrusted]` callout: its first line and the `>` lines after it."""
    if "[!" not in text:
        return []
    regions: list[tuple[int, int]] = []
    offset = 0
    start: int | None = None
    for line in text.splitlines(keepends=True):
        if start is not None and not _QUOTE_LINE.match(line):
            regions.append((start, offset))
            start = None
        if start is None and _UNTRUSTED_START.match(line):
            start = offset
        offset += len(line)
    if start is not None:
        regions.append((start, offset))
    return regions


def phrase_spans(text: str) -> list[Span]:
    """Instruction-like phrases anywhere in `text` (no untrusted-callout exemption)."""
    lower = " ".join(text.lower().split())
    spans: list[Span] = []
    for kind, pattern, gate in _PHRASES:
        if not gate_open(gate, lower, lower):
            continue
        for m in pattern.finditer(text):
            if "obj" in pattern.groupindex and not (_SENSITIVE_OBJECT.search(m.group("obj")) and _imperative(text, m.start())):
                continue
            spans.append((m.start(), m.end(), kind))
    return disjoint(spans)


def _comment_spans(text: str) -> list[Span]:
    if "<!--" not in text:
        return []
    out = []
    for m in _COMMENT.finditer(text):
        body = m.group(1)
        if _DIRECTIVE_IN_COMMENT.search(body) or phrase_spans(body):
            out.append((m.start(), m.end(), "hidden-comment"))
    return out


def injection_spans(text: str, honor_untrusted: bool = True) -> list[Span]:
    """(start, end, kind) of instruction-like text aimed at an agent, sorted.

    Kinds: override ("ignore previous instructions", "disregard the above"), role ("you must
    now", "from now on, always", "you are now DAN", "note to AI assistants:"), system-prompt
    ("reveal your system prompt", chat-template tokens), exfiltration ("send all passwords to
    x@y.z", image URLs carrying data), hidden-comment (an HTML comment with a directive), and
    invisible / bidi / tag characters. Phrases and comments inside a `> [!untrusted]` callout
    are skipped when `honor_untrusted`; invisible characters never are.
    """
    regions = untrusted_regions(text) if honor_untrusted else []
    comments = _comment_spans(text)
    spans = [s for s in phrase_spans(text) + comments if not any(a <= s[0] < b for a, b in regions)]
    # A phrase inside a flagged comment is reported once, as the comment.
    kept = [s for s in spans if s[2] == "hidden-comment" or not any(c[0] <= s[0] < c[1] for c in comments)]
    return sorted(kept + invisible_spans(text))
