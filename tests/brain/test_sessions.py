"""The canonical session reader: bad lines are reported with their line numbers and skipped."""

from __future__ import annotations

from brain.sessions import Session, SessionHeader, Turn, parse_session, render_session

HEADER = '{"type":"session","id":"s1","started":"2026-05-03T10:02:00+09:00","participants":["Nadia","assistant"]}'


def _problems(problems):
    return [(p.line, p.message) for p in problems]


def test_reads_a_clean_session():
    text = HEADER + '\n{"type":"turn","n":1,"role":"user","speaker":"Nadia","text":"Hi"}\n'
    session, problems = parse_session(text, "sessions/raw/s1.jsonl")
    assert problems == []
    assert session.id == "s1"
    assert session.turn(1).text == "Hi"
    assert session.turn(2) is None


def test_bad_lines_are_reported_with_line_numbers():
    lines = [
        HEADER,
        '{"type":"turn","n":1,"role":"user","text":"one"}',
        "{not json",
        "[1, 2]",
        '{"type":"turn","n":1,"role":"user","text":"again"}',
        '{"type":"turn","n":0,"role":"user","text":"zero"}',
        '{"type":"turn","n":3,"text":"no role"}',
        '{"type":"banana"}',
        "",
        '{"type":"turn","n":2,"role":"assistant","text":"two"}',
        HEADER,
    ]
    session, problems = parse_session("\n".join(lines) + "\n", "s.jsonl")
    assert [t.n for t in session.turns] == [1, 2]
    assert [line for line, _ in _problems(problems)] == [3, 4, 5, 6, 7, 8, 11]
    messages = dict(_problems(problems))
    assert messages[3].startswith("malformed JSON")
    assert messages[5] == "turn 1 appears twice; the later line is skipped"
    assert "n" in messages[6] and messages[6].endswith("line skipped")
    assert "role" in messages[7]
    assert messages[8] == "unknown line type 'banana'; expected 'session' or 'turn'; line skipped"
    assert messages[11] == "second session header; line skipped"
    assert str(problems[0]).startswith("s.jsonl:3: malformed JSON")


def test_no_header_and_unsafe_ids_give_no_session():
    session, problems = parse_session('{"type":"turn","n":1,"role":"user","text":"x"}\n', "s.jsonl")
    assert session is None
    assert _problems(problems)[-1][0] == 1
    session, problems = parse_session('{"type":"session","id":"../etc"}\n', "s.jsonl")
    assert session is None
    assert "unsafe session id" in problems[0].message


def test_binary_and_invalid_utf8():
    assert parse_session(b"\x00\x01", "s.jsonl")[0] is None
    session, problems = parse_session(HEADER.encode() + b'\n{"type":"turn","n":1,"role":"user","text":"caf\xe9"}\n', "s.jsonl")
    assert session.turn(1).text == "caf\ufffd"
    assert problems[0].line == 2


def test_render_then_read_round_trip(tmp_path):
    session = Session(
        header=SessionHeader(id="s1", started="2026-05-03T10:02:00+09:00", participants=["Nadia"]),
        turns=[Turn(n=1, role="user", speaker="Nadia", text="Grüße\nzwei Zeilen"), Turn(n=2, role="assistant", text="ok")],
    )
    text = render_session(session)
    assert text.splitlines()[0] == '{"type":"session","id":"s1","started":"2026-05-03T10:02:00+09:00","participants":["Nadia"]}'
    path = tmp_path / "s1.jsonl"
    path.write_text(text, encoding="utf-8")
    again, problems = parse_session(path.read_bytes(), "sessions/raw/s1.jsonl")
    assert problems == [] and again == session


