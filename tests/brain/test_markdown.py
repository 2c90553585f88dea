"""Wikilinks and cites with 1-based file lines; code spans and fences are text, not edges."""

from __future__ import annotations

from brain.markdown import CiteRef, CodeRef, WikiLink, parse_body, strip_refs

BODY = """\
# Title

See [[kyoto]] and [[sora-city-laboratory|the lab]] [cite:1][cite:2].
A heading link: [[juds#History|history]], a
second line [[ Spaced ]] [cite:3].

`[[in-code]] [cite:9]` is a code span.

```
[[in-fence]]
[cite:8]
```

    [[indented-code]]

- item [[last]] [cite:4]
"""


def test_refs_carry_file_lines():
    refs = parse_body(BODY, first_line=10)
    assert refs.links == [
        WikiLink(target="kyoto", line=12),
        WikiLink(target="sora-city-laboratory", text="the lab", line=12),
        WikiLink(target="juds", heading="History", text="history", line=13),
        WikiLink(target="Spaced", line=14),
        WikiLink(target="last", line=25),
    ]
    assert refs.cites == [CiteRef(n=1, line=12), CiteRef(n=2, line=12), CiteRef(n=3, line=14), CiteRef(n=4, line=25)]
    assert [(h.level, h.title, h.line) for h in refs.headings] == [(1, "Title", 10)]


def test_refs_in_code_are_reported_apart():
    refs = parse_body(BODY, first_line=10)
    assert refs.code_refs == [
        CodeRef(text="[[in-code]]", line=16),
        CodeRef(text="[cite:9]", line=16),
        CodeRef(text="[[in-fence]]", line=19),
        CodeRef(text="[cite:8]", line=20),
        CodeRef(text="[[indented-code]]", line=23),
    ]


def test_strip_refs():
    assert strip_refs("Met [[kenji-mori|Kenji]] in [[kyoto]] [cite:1].") == "Met Kenji in kyoto ."
