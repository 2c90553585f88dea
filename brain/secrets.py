"""Secret shapes: `secret_spans(text)` finds credentials, `redact_secrets(text)` masks them.

The provider rules are Yelp's detect-secrets (its regex plugins, kept up to date upstream) plus
shapes it lacks (Anthropic, Google, Hugging Face, DigitalOcean, Shopify, bearer tokens, private
key blocks whole); then card numbers, IDs and IBANs with their checksums, and values stated in
prose ("the wifi password is …"). Used at the read edge (brain.sessions) and by the X001 check.
Patterns favour precision: prose such as "the password policy" or "a token of thanks" must not
match, and neither must code such as `token = next(tokens)`.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

from brain.patterns import Gate, LazyPattern, Span, disjoint, gate_open, replace_spans

# (kind, pattern, group whose span is the secret, gate: see brain.patterns.Gate)
_SECRETS: list[tuple[str, LazyPattern, int, Gate]] = [
    (
        "private-key",
        LazyPattern(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,20000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:\r?\n[A-Za-z0-9+/=]{16,}\r?)*)"
        ),
        0,
        (("PRIVATE KEY",),),
    ),
    ("anthropic-api-key", LazyPattern(r"\bsk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_\-]{20,}"), 0, (("sk-ant-",),)),
    ("openai-api-key", LazyPattern(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}"), 0, (("sk-",),)),
    ("github-token", LazyPattern(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), 0, (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),)),
    ("slack-token", LazyPattern(r"\bxox[abposre]-[A-Za-z0-9][A-Za-z0-9-]{9,}"), 0, (("xox",),)),
    ("slack-webhook", LazyPattern(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}"), 0, (("hooks.slack.com",),)),
    ("stripe-key", LazyPattern(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0, (("_live_", "_test_"),)),
    ("stripe-webhook-secret", LazyPattern(r"\bwhsec_[A-Za-z0-9+/]{24,}"), 0, (("whsec_",),)),
    ("google-api-key", LazyPattern(r"\bAIza[0-9A-Za-z_\-]{35}"), 0, (("AIza",),)),
    ("google-oauth-secret", LazyPattern(r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"), 0, (("GOCSPX-",),)),
    ("google-oauth-token", LazyPattern(r"\bya29\.[0-9A-Za-z_\-]{20,}"), 0, (("ya29.",),)),
    (
        "aws-access-key-id",
        LazyPattern(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
        0,
        (("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),),
    ),
    (
        "aws-secret-access-key",
        LazyPattern(r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
        1,
        (("aws_secret", "awssecret"),),
    ),
    ("jwt", LazyPattern(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, (("eyJ",),)),
    ("bearer-token", LazyPattern(r"\bBearer\s+([A-Za-z0-9._~+/\-]{20,}=*)"), 1, (("bearer",),)),
    ("url-password", LazyPattern(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@?#\[\]()<>\"']+:([^\s@/?#()<>\"']+)@[^\s/]"), 1, (("://",), ("@",))),
    ("npm-token", LazyPattern(r"\bnpm_[A-Za-z0-9]{36}\b"), 0, (("npm_",),)),
    ("azure-storage-key", LazyPattern(r"AccountKey=([A-Za-z0-9+/]{40,}={0,2})"), 1, (("AccountKey",),)),
    ("mailgun-key", LazyPattern(r"\bkey-[0-9a-zA-Z]{32}\b"), 0, (("key-",),)),
    ("huggingface-token", LazyPattern(r"\bhf_[A-Za-z0-9]{34,}\b"), 0, (("hf_",),)),
    ("pypi-token", LazyPattern(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), 0, (("pypi-",),)),
    ("twilio-key", LazyPattern(r"\bSK[0-9a-fA-F]{32}\b"), 0, (("SK",),)),
    ("digitalocean-token", LazyPattern(r"\bdo[por]_v1_[a-f0-9]{64}\b"), 0, (("dop_v1_", "doo_v1_", "dor_v1_"),)),
    ("shopify-token", LazyPattern(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), 0, (("shpat_", "shpca_", "shppa_", "shpss_"),)),
]

# detect-secrets' regex plugins (brain/secret_rules.json), each behind a gate of its own
# literals: a text without them is not searched.
_KEYWORD: Gate = (("key", "pw", "pass", "token", "secret"),)
_DETECT_SECRETS_GATES: dict[str, Gate] = {
    "AWSKeyDetector": (("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "aws"),),
    "AzureStorageKeyDetector": (("AccountKey",),),
    "BasicAuthDetector": (("://",), ("@",)),
    "CloudantDetector": (("cl", "cloudant.com"), ("key", "pw", "pass", "token", "cloudant.com")),
    "DiscordBotTokenDetector": ((".",), ("M", "N", "O")),
    "GitHubTokenDetector": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),),
    "GitLabTokenDetector": (("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941", "glcbt-", "glimt-", "glptt-",
                             "glagent-", "gloas-"),),
    "IbmCloudIamDetector": _KEYWORD,
    "IbmCosHmacDetector": _KEYWORD,
    "JwtTokenDetector": (("eyJ",),),
    "MailchimpDetector": (("-us",),),
    "NpmDetector": (("_authToken",),),
    "OpenAIDetector": (("T3BlbkFJ",),),
    "PrivateKeyDetector": (("PRIVATE KEY", "PuTTY-User-Key"),),
    "PypiTokenDetector": (("pypi-",),),
    "SendGridDetector": (("SG.",),),
    "SlackDetector": (("xox", "hooks.slack.com"),),
    "SoftlayerDetector": _KEYWORD + (("sl", "softlayer"),),
    "SquareOAuthDetector": (("sq0csp-",),),
    "StripeDetector": (("k_live_",),),
    "TelegramBotTokenDetector": ((":",), ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9")),
    "TwilioKeyDetector": (("AC", "SK"),),
}


@functools.cache  # loaded the first time a text is scanned
def _detect_secrets_rules() -> list[tuple[str, Gate, tuple[LazyPattern, ...], bool]]:
    """(kind, gate, patterns, weak) of each of detect-secrets' regex plugins (brain/secret_rules.json,
    written from the package by scripts/gen_secret_rules.py); `weak`: see `_weak`."""
    data = json.loads((resources.files("brain") / "secret_rules.json").read_text(encoding="utf-8"))
    return [(rule["kind"], gate, tuple(LazyPattern(p, f) for p, f in rule["patterns"]), _weak(gate))
            for rule in data["rules"] for gate in [_DETECT_SECRETS_GATES[rule["plugin"]]]]


def _weak(gate: Gate) -> bool:
    """A gate whose first words are too common to pre-filter by (".", ":", "pw"): its rule is
    tried on every text, while the others wait for the one search of all first words."""
    return any(len(w) < 3 for w in gate[0])


def _maintained_spans(text: str, lower: str, weak_only: bool) -> list[Span]:
    spans = []
    for kind, gate, patterns, weak in _detect_secrets_rules():
        if (weak_only and not weak) or not gate_open(gate, text, lower):
            continue
        for m in (m for pattern in patterns for m in pattern.finditer(text)):
            # A rule that captures the value after its label (`password = "…"`, `user:pass@`)
            # masks that value; the others mask the whole match.
            g = 1 if m.lastindex and m.start(1) > m.start() and m.end(1) >= m.end() - 1 else 0
            if m.end(g) > m.start(g):
                spans.append((m.start(g), m.end(g), kind))
    return spans


# Numbers that identify a person or an account, checked by their own rules (no word gates them).
_CARD = LazyPattern(r"(?<![\d-])\d[\d -]{11,22}\d(?![\d-])")  # a run of digits, spaces and dashes; checked below
_DIGIT = LazyPattern(r"\d")
_CARD_PREFIX = LazyPattern(r"4|5[1-5]|2[2-7]|3[47]|6(?:011|5)")
_SSN = LazyPattern(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_IBAN = LazyPattern(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _iban_ok(value: str) -> bool:
    compact = value.replace(" ", "")
    moved = compact[4:] + compact[:4]
    return 15 <= len(compact) <= 34 and int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _card_windows(run: str) -> list[tuple[int, int]]:
    """(start, end) in `run` of each card number in it: consecutive groups of digits (split at
    spaces and dashes) holding 13 to 19 digits, with a card prefix and a valid Luhn sum."""
    groups = [(m.start(), m.end()) for m in re.finditer(r"\d+", run)]
    found: list[tuple[int, int]] = []
    for i, (start, _) in enumerate(groups):
        if found and start < found[-1][1]:
            continue
        for j in range(i, len(groups)):
            digits = "".join(run[a:b] for a, b in groups[i : j + 1])
            if len(digits) > 19:
                break
            if len(digits) >= 13 and _CARD_PREFIX.match(digits) and _luhn(digits):
                found.append((start, groups[j][1]))
                break
    return found


def _number_spans(text: str) -> list[Span]:
    """Card numbers (Luhn and a card prefix), US social security numbers, IBANs (mod 97)."""
    if _DIGIT.search(text) is None:
        return []
    spans: list[Span] = []
    for m in _CARD.finditer(text):
        spans += [(m.start() + a, m.start() + b, "card-number") for a, b in _card_windows(m.group(0))]
    spans += [(m.start(), m.end(), "ssn") for m in _SSN.finditer(text)]
    spans += [(m.start(), m.end(), "iban") for m in _IBAN.finditer(text) if _iban_ok(m.group(0))]
    return spans


_LABELS = {"pass": "password", "pwd": "password", "token": "token", "key": "api-key", "secret": "secret"}
_PROSE_SECRET = LazyPattern(
    r"(?i)\b(?P<label>pass(?:word|wd|phrase|code)|pwd|(?:api|access|secret|private)[ _-]?key"
    r"|(?:(?:auth|access|api|bearer|refresh|session)[ _-]?)?token|client[ _-]?secret|secret)\b"
    r"(?:\s+(?:for|of|to|on|at)(?:\s+[\w.@'’-]+){1,3})?"
    r"\s*(?:\bis\b|\bwas\b|:=|=|:)\s*"
    r"(?:\"(?P<q1>[^\"\n]{4,200})\"|'(?P<q2>[^'\n]{4,200})'|`(?P<q3>[^`\n]{4,200})`|(?P<u>[^\s\"'`,;]{6,200}))"
)
_PROSE_GATE: Gate = (
    ("pass", "pwd", "token", "secret", "api key", "api_key", "api-key", "apikey", "access key", "access_key",
     "access-key", "accesskey", "private key", "private_key", "private-key", "privatekey"),
)
_WORDY = LazyPattern(r"[A-Za-z]+(?:['’\-][A-Za-z]+)*")
_QUOTED_WORDS = LazyPattern(r"[A-Za-z][A-Za-z '’\-]*")
_PLACEHOLDER = LazyPattern(
    r"^(?:\[REDACTED|<|\$\{?|\{\{|%|:|x{4,}$|\.\.\.|…|https?://|/|~/|\./|\d{4}-\d{2}-\d{2}$)|\*{3,}|[<>]", re.IGNORECASE
)
_SECRET_TEMPLATE = LazyPattern(r"^(?:\$\{?\w+\}?|<[^>]*>|\{\{[^}]*\}\}|\*+|x+|\[REDACTED[^\]]*\]?)$", re.IGNORECASE)


def _has_letters_and_digits(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_CODE_VALUE = LazyPattern(r"[A-Za-z_]+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|.*[(\[{].*|#[0-9A-Fa-f]{3,8}")


def _prose_value_is_secret(value: str, quoted: bool) -> bool:
    """A stated value that looks like a credential: not a word, placeholder, path, date or code."""
    if _PLACEHOLDER.search(value) or _CODE_VALUE.fullmatch(value):
        return False  # `token = Name.Builtin`, `password = getpass(...)`, `passwd: ${PW}`
    if quoted:
        return not _QUOTED_WORDS.fullmatch(value)
    return not _WORDY.fullmatch(value) and any(not c.isalpha() for c in value)


def _first_words(exact: bool) -> LazyPattern:
    words = {w for *_, gate in _SECRETS for w in gate[0]} | set(_PROSE_GATE[0])
    words |= {w for gate in _DETECT_SECRETS_GATES.values() if not _weak(gate) for w in gate[0]}
    chosen = sorted((w for w in words if (w != w.lower()) == exact), key=lambda w: (-len(w), w))
    return LazyPattern("|".join(map(re.escape, chosen)))


# A gate opens only with a word of its first group, so a text with none of those words (nearly
# every text) has no secret span: one regex pass of each kind says so instead of a loop of gates.
_FIRST_EXACT, _FIRST_LOWER = _first_words(exact=True), _first_words(exact=False)


def secret_spans(text: str) -> list[Span]:
    """(start, end, kind) of each credential-shaped string, sorted and non-overlapping.

    Kinds: those of the rules above (private-key, anthropic-api-key, openai-api-key, github-token,
    aws-access-key-id, url-password: the password of `scheme://user:pass@host`, …), those of
    detect-secrets' plugins by their names (sendgrid-api-key, discord-bot-token, gitlab-token, …),
    card-number, ssn, iban, and password / token / api-key / secret for a value stated in prose
    ("the wifi password is hunter22", "token: ab12…").
    """
    spans = _number_spans(text)
    lower = text.lower()
    if _FIRST_LOWER.search(lower) is None and _FIRST_EXACT.search(text) is None:
        return disjoint(spans + _maintained_spans(text, lower, weak_only=True))
    for kind, pattern, group, gate in _SECRETS:
        if not gate_open(gate, text, lower):
            continue
        for m in pattern.finditer(text):
            value = m.group(group)
            if kind in ("openai-api-key", "bearer-token") and not _has_letters_and_digits(value):
                continue
            if kind == "url-password" and _SECRET_TEMPLATE.match(value):
                continue
            spans.append((m.start(group), m.end(group), kind))
    if gate_open(_PROSE_GATE, text, lower):
        for m in _PROSE_SECRET.finditer(text):
            group = next(g for g in ("q1", "q2", "q3", "u") if m.group(g) is not None)
            start, value = m.start(group), m.group(group)
            if group == "u":
                value = value.rstrip(".,;:!?)]}>")
            if not _prose_value_is_secret(value, quoted=group != "u"):
                continue
            label = m.group("label").lower()
            kind = next(v for k, v in _LABELS.items() if k in label)
            spans.append((start, start + len(value), kind))
    # Where a rule here finds the same secret, its name (more precise) is the one shown.
    spans += [m for m in _maintained_spans(text, lower, weak_only=False) if not any(a < m[1] and m[0] < b for a, b, _ in spans)]
    return disjoint(spans)


def redact_secrets(text: str) -> str:
    """`text` with every secret span replaced by `[REDACTED:<kind>]` (the rest unchanged)."""
    return replace_spans(text, secret_spans(text), lambda kind: f"[REDACTED:{kind}]")
