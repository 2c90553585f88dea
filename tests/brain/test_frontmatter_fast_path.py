"""The front-matter reader that skips PyYAML must give exactly PyYAML's mapping wherever it answers."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.errors import PageError
from brain.page import _KEY_LINE_RE, Frontmatter, _float_scalar, _implicit_tag, _loader, _simple_yaml, dump_frontmatter, split_frontmatter


def _typed(value):
    """Values with their types, so that 1 == 1.0 == True do not pass for each other."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


def _agrees(text: str) -> bool:
    """True when the fast reader passes (None) or answers what PyYAML answers."""
    fast = _simple_yaml(text)
    if fast is None:
        return True
    assert _typed(fast) == _typed(yaml.load(text, Loader=_loader())), text
    return False


_KEYS = st.sampled_from(["title", "type", "a", "no", "on", "y", "1", "02", "2024-01-01", "x_y", "k-1", "null", "True"])
_SCALARS = st.sampled_from(
    ["x", "two words", "a: b", "a:b", "a #b", "a#b", "1", "01", "0", "-1", "1.5", "1.50", ".5", "1e5", "0x1F", "1_000",
     "2026-01-01", "2026-02-30", "2026-1-1", "2026-01-01T10:00:00Z", "yes", "No", "null", "~", "", " x", "x ", "'q'",
     "'it''s'", "'a' b", '"d"', '"\\u00e9\\x41\\\\\\""', '"\\n"', '"\\ud800"', "[a, b]", "[a,b]", "['a, b', \"c\"]", "[]",
     "{}", "{a: 1}", "[a, [b]]", "[a?]", "[a:b]", "&a x", "*a", "!!str 1", "|", ">", "-", "- x", "?x", "%x", "@x", "`x",
     "x\u00a0y", "é", "x\u2028y", "a\tb", "[ a]", "[a, ]", "<<", "=", "[2026-01-01, 3, x]"]
)
_LINES = st.one_of(
    st.tuples(_KEYS, _SCALARS).map(lambda kv: f"{kv[0]}: {kv[1]}\n"),
    st.tuples(_KEYS, _SCALARS).map(lambda kv: f"  {kv[0]}: {kv[1]}\n"),
    _KEYS.map(lambda k: f"{k}:\n"),
    st.sampled_from(["\n", "# c\n", "- x\n", "    a: b\n", "a:b\n", "a: b # c\n", "---\n", "a: 'b\n"]),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINES, max_size=8).map("".join))
def test_fast_reader_matches_pyyaml_on_assembled_lines(text: str) -> None:
    _agrees(text)


_ENTRY = st.one_of(
    st.tuples(_KEYS, _SCALARS).map(lambda kv: f"{kv[0]}: {kv[1]}\n"),
    st.tuples(_KEYS, st.lists(st.tuples(_KEYS, _SCALARS), min_size=1, max_size=3)).map(
        lambda kv: f"{kv[0]}:\n" + "".join(f"  {k}: {v}\n" for k, v in kv[1])
    ),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ENTRY, min_size=1, max_size=4).map("".join))
def test_fast_reader_matches_pyyaml_on_mappings(text: str) -> None:
    _agrees(text)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _TEXT.filter(str.strip),
    st.sampled_from(["person", "note", "session", "concept"]),
    st.lists(_TEXT, max_size=3),
    st.one_of(st.none(), _TEXT),
    st.one_of(st.none(), st.dates(dt.date(1900, 1, 1), dt.date(2100, 1, 1))),
    st.dictionaries(st.integers(1, 40), _TEXT, max_size=4),
    st.dictionaries(st.sampled_from(["kind", "topic", "id", "turns", "confidence", "observed"]),
                    st.one_of(_TEXT, st.integers(0, 10**6), st.floats(0, 1), st.dates(), st.lists(_TEXT, max_size=3)), max_size=4),
)
def test_fast_reader_matches_pyyaml_on_rendered_front_matter(title, type_, aliases, summary, created, sources, extras) -> None:
    fm = Frontmatter(title=title, type=type_, aliases=aliases, summary=summary, created=created, sources=sources, **extras)
    block = dump_frontmatter(fm)
    _agrees(block[len("---\n") : -len("---\n")])


def test_what_dream_writes_takes_the_fast_path() -> None:
    note = "title: It's done\ntype: note\nkind: identity\ntopic: ada-abe\nconfidence: 0.6\nobserved: 2024-01-01\nsources:\n  1: session:s#t7\n"
    summary = "title: S1\ntype: session\nid: '2024-01-01-s1'\nstarted: '2024-01-01T09:00:00+00:00'\nparticipants: [Owner, assistant]\nturns: 10\ntopics: []\n"
    for text in (note, summary):
        assert not _agrees(text)


def _split_by_lines(text: str):
    """split_frontmatter's split as it was written first (every line of the text), for reference."""
    stripped = text.lstrip("\ufeff")
    lines = stripped.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    if not lines or lines[0].rstrip("\r\n") != "---":
        return "no front matter"
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "...")), None)
    if end is None:
        return "not closed"
    fm_text = "".join(lines[1:end])
    key_lines = {m.group(1): fm_text.count("\n", 0, m.start()) + 2 for m in _KEY_LINE_RE.finditer(fm_text)}
    return "".join(lines[: end + 1]), "".join(lines[end + 1 :]), end + 2, key_lines


_DOC_PIECES = st.sampled_from(["---", "...", "\n", "\r\n", "\r", "\ufeff", "a: 1", "title: x", "b:", "  c: d", "x", " ", "---x", "# h", "\f", "\u2028"])


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_DOC_PIECES, max_size=14).map("".join))
def test_split_frontmatter_cuts_where_the_line_by_line_split_did(text: str) -> None:
    expected = _split_by_lines(text)
    try:
        _meta, block, body, body_line, key_lines = split_frontmatter(text, "p.md")
    except PageError as exc:
        split_error = "no front matter" if "no front matter" in str(exc) else "not closed" if "not closed" in str(exc) else None
        # Otherwise the split agreed and the YAML between the lines was refused.
        assert split_error == (expected if isinstance(expected, str) else None), text
    else:
        assert (block, body, body_line, key_lines) == expected, text


_SCALAR_PIECES = st.sampled_from(["0", "1", "7", "9", "_", ".", "-", "+", ":", "e", "E", "x", "b", "o", "T", "t", "Z", " ", "\t",
                                  "~", "n", "N", "y", "Y", "<", "=", "!", "&", "*", "inf", "nan", "NaN", "null", "true",
                                  "yes", "Off", "2026-01-02", "10:20:30", "0x", "0b", "\n", "é"])


@settings(max_examples=4000, deadline=None)
@given(st.lists(_SCALAR_PIECES, max_size=8).map("".join))
def test_plain_scalars_resolve_to_the_tag_pyyaml_gives(text: str) -> None:
    """brain.page resolves plain scalars without importing PyYAML: with PyYAML's own table."""
    assert _implicit_tag(text) == yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False)), repr(text)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(min_value=-2, max_value=2).map(lambda x: round(x, 3))),
       st.booleans())
def test_a_float_is_written_as_pyyaml_writes_it(value: float, flow: bool) -> None:
    if flow:
        expected = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=10**9).strip()[1:-1]
    else:
        expected = yaml.safe_dump({"k": value}, default_flow_style=False, allow_unicode=True, width=10**9)[3:].removesuffix("\n")
    assert _float_scalar(repr(value), flow) == expected


def test_the_front_matter_brain_writes_is_read_and_written_without_importing_pyyaml() -> None:
    """PyYAML costs 12 ms to import: a nightly run's pages and notes never need it."""
    code = (
        "import sys, datetime as dt\n"
        "from brain.page import Frontmatter, dump_frontmatter, split_frontmatter\n"
        "fm = Frontmatter(title='Nadia', type='person', aliases=['N', 'no'], summary='Works on: Kyoto', created=dt.date(2026, 1, 2),\n"
        "                 updated=dt.date(2026, 2, 3), sources={'1': 'sessions/raw/a.jsonl#t3'}, confidence=0.85)\n"
        "text = dump_frontmatter(fm) + 'body\\n'\n"
        "meta, *_ = split_frontmatter(text, 'p.md')\n"
        "assert Frontmatter.model_validate(meta) == fm, meta\n"
        "assert 'yaml' not in sys.modules, 'yaml was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
