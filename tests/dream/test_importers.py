"""Importers: every format → canonical sessions/raw/<id>.jsonl; append-only, idempotent, safe names."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from brain.layout import is_session_id
from brain.sessions import parse_session


def read_session(path: Path):
    return parse_session(path.read_bytes(), str(path))
from dream.cli import main
from dream.importers import IMPORTERS, import_path, read_source, safe_session_id
from dream.importers.base import apply_import, plan_import
from dream.importers.chatgpt import epoch_to_iso
from dream.importers.claude_code import TOOL_LINE_MAX, read_claude_code, tool_line
from dream.importers.locomo import evidence_targets, parse_date_time
from dream.importers.longmemeval import parse_date
SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "importers"
CC_ID = "3f6c2a0e-8d1b-4e5a-9c7d-2b1e0f4a6d93"
CC_LATER = "5d0c9b7e-1f2a-4c3b-8e9d-0a1b2c3d4e5f"  # the same project, with a task list, a failed command and a correction
CASES = {
    "jsonl": SAMPLES / "canonical",
    "claude-code": SAMPLES / "claude-code",
    "chatgpt": SAMPLES / "chatgpt-export",
    "locomo": SAMPLES / "locomo-sample.json",
    "longmemeval": SAMPLES / "longmemeval-sample.json",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def raw(brain: Path, sid: str) -> str:
    return (brain / "sessions" / "raw" / f"{sid}.jsonl").read_text(encoding="utf-8")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def lines(*objs: dict) -> str:
    return "".join(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n" for o in objs)


# --- LoCoMo ----------------------------------------------------------------------------------


def test_locomo_sessions_follow_the_readme_mapping(tmp_path: Path) -> None:
    report = import_path("locomo", CASES["locomo"], tmp_path)
    assert report.created == ["conv-90-s1", "conv-90-s2"]  # session_3 has a date but no turns
    assert report.problems == [
        f"{CASES['locomo']}: conv-90 session 2: no turn 3 (dia_id gap); other turns keep their dia_id numbers"
    ]
    def turn(n: int, speaker: str, text: str) -> dict:
        return {"type": "turn", "n": n, "role": "user", "speaker": speaker, "time": "2023-05-08T13:56:00", "text": text}

    assert raw(tmp_path, "conv-90-s1") == lines(
        {"type": "session", "id": "conv-90-s1", "started": "2023-05-08T13:56:00", "source": "locomo",
         "title": "conv-90 session 1", "participants": ["Ana", "Ben"]},
        turn(1, "Ana", "Hi Ben! I finally adopted a dog last weekend."),
        turn(2, "Ben", "That's wonderful! What's the dog's name?"),
        turn(3, "Ana", "Her name is Pepper, here she is. [image: a photo of a small brown dog on a red blanket]"),
    )
    s2 = [json.loads(x) for x in raw(tmp_path, "conv-90-s2").splitlines()]
    assert s2[0]["started"] == "2023-06-27T10:05:00"
    assert [(x["n"], x["speaker"]) for x in s2[1:]] == [(1, "Ben"), (2, "Ana"), (4, "Ben")]  # n from dia_id


def test_locomo_gold_evidence_resolves_to_the_turn_text(tmp_path: Path) -> None:
    import_path("locomo", CASES["locomo"], tmp_path)
    sample = json.loads(CASES["locomo"].read_text())[0]
    for qa in sample["qa"]:
        for evidence in qa["evidence"]:
            targets = evidence_targets(sample["sample_id"], evidence)
            assert targets, evidence
            for target in targets:
                session, _ = read_session(tmp_path / "sessions" / "raw" / f"{target.ref}.jsonl")
                assert session is not None and session.turn(target.first_turn) is not None, str(target)
    pepper = evidence_targets("conv-90", "D1:3")[0]
    assert str(pepper) == "session:conv-90-s1#t3"
    # The malformed "D2:2; D2:4" entry yields both turns; the answer is in the image caption's turn.
    assert [str(t) for t in evidence_targets("conv-90", "D2:2; D2:4")] == ["session:conv-90-s2#t2", "session:conv-90-s2#t4"]


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
        ("12:09 am on 13 September, 2023", "2023-09-13T00:09:00"),
        ("12:30 pm on 1 January, 2024", "2024-01-01T12:30:00"),
        ("10:37 AM on 27 June, 2023", "2023-06-27T10:37:00"),
        ("13:56 pm on 8 May, 2023", None),
        ("1:56 pm on 8 Mayo, 2023", None),
        ("yesterday", None),
    ],
)
def test_locomo_date_time(text: str, iso: str | None) -> None:
    assert parse_date_time(text) == iso


def test_locomo_bad_turns_are_reported_and_numbering_stays_on_dia_id(tmp_path: Path, make_tree) -> None:
    src = tmp_path / "in" / "lo.json"
    conv = {
        "speaker_a": "A", "speaker_b": "B",
        "session_1_date_time": "sometime",
        "session_1": [
            {"speaker": "A", "dia_id": "D1:1", "text": "one"},
            {"speaker": "B", "dia_id": "D1-2", "text": "malformed id"},
            {"speaker": "A", "dia_id": "D1:2", "text": "dup of 2"},
            {"speaker": "B", "dia_id": "D9:3", "text": "wrong session"},
            "not a turn",
        ],
    }
    make_tree(name="in", files={"lo.json": json.dumps([{"sample_id": "c1", "conversation": conv}, 7])})
    report = import_path("locomo", src, tmp_path / "brain")
    w = f"{src}: c1 session 1"
    assert report.problems == [
        f"{w}: date 'sometime' is not like '1:56 pm on 8 May, 2023'; imported without a time",
        f"{w} item 1: dia_id 'D1-2' is not like 'D1:7'; numbered it turn 2",
        f"{w}: dia_id 'D1:2' repeats turn 2; the later turn was skipped",
        f"{w}: dia_id D9:3 belongs to session 9; kept as turn 3 of session 1",
        f"{w} item 4: not a turn with string 'speaker' and 'text'; skipped",
        f"{src}: sample 1: not an object with a string 'sample_id'; sample skipped",
    ]
    session, _ = read_session(tmp_path / "brain" / "sessions" / "raw" / "c1-s1.jsonl")
    assert [(t.n, t.text) for t in session.turns] == [(1, "one"), (2, "malformed id"), (3, "wrong session")]
    assert session.header.started is None and session.turns[0].time is None


# --- LongMemEval -----------------------------------------------------------------------------


def test_longmemeval_ids_dates_and_turns(tmp_path: Path) -> None:
    report = import_path("longmemeval", CASES["longmemeval"], tmp_path)
    # The shared haystack session gets one file per question (distinct ids).
    assert report.created == ["q001-answer_b2", "q001-sharegpt_a1", "q002_abs-sharegpt_a1"]
    assert report.problems == []
    assert raw(tmp_path, "q001-answer_b2") == lines(
        {"type": "session", "id": "q001-answer_b2", "started": "2023-05-22T18:40:00", "source": "longmemeval",
         "participants": ["user", "assistant"]},
        {"type": "turn", "n": 1, "role": "user", "speaker": "user", "text": "I just bought a teal bike for my commute."},
        {"type": "turn", "n": 2, "role": "assistant", "speaker": "assistant",
         "text": "Teal is a great choice! Do you need a lock?"},
        {"type": "turn", "n": 3, "role": "user", "speaker": "user", "text": "Yes, a light one please."},
    )
    assert "has_answer" not in raw(tmp_path, "q001-answer_b2")  # the answer key stays out of the Brain


@pytest.mark.parametrize(
    ("text", "iso"),
    [("2023/05/20 (Sat) 02:21", "2023-05-20T02:21:00"), ("2023/5/2 14:00", "2023-05-02T14:00:00"),
     ("2023/13/20 (Sat) 02:21", None), ("May 20", None)],
)
def test_longmemeval_date(text: str, iso: str | None) -> None:
    assert parse_date(text) == iso


def test_longmemeval_bad_items_are_reported_and_numbers_keep_positions(tmp_path: Path, make_tree) -> None:
    items = [
        {"question_id": "qa", "haystack_dates": ["2023/05/20 (Sat) 02:21"], "haystack_session_ids": ["s1"],
         "haystack_sessions": [[{"role": "user", "content": "hi"}, {"role": "assistant"}, {"role": "user", "content": "x"}]]},
        {"question_id": "qb", "haystack_dates": [], "haystack_session_ids": ["s1"], "haystack_sessions": [[]]},
        ["not", "an", "item"],
    ]
    src = make_tree(name="in", files={"lme.json": json.dumps(items)}) / "lme.json"
    report = import_path("longmemeval", src, tmp_path / "brain")
    assert report.created == ["qa-s1"]
    assert report.problems == [
        f"{src}: item 0 (qa) session s1 turn 2: not a turn with string 'role' and 'content'; skipped",
        f"{src}: item 1 (qb): haystack_session_ids, haystack_sessions, haystack_dates must be lists of the same length; item skipped",
        f"{src}: item 2: not an object with a string 'question_id'; item skipped",
    ]
    session, _ = read_session(tmp_path / "brain" / "sessions" / "raw" / "qa-s1.jsonl")
    assert [t.n for t in session.turns] == [1, 3]


# --- ChatGPT ---------------------------------------------------------------------------------


def test_chatgpt_follows_current_node_and_keeps_visible_text(tmp_path: Path) -> None:
    report = import_path("chatgpt", CASES["chatgpt"], tmp_path)
    cid = "chatgpt-6650a1b2-7e3d-4c3d-9e8f-0a1b2c3d4e5f"
    profile = "chatgpt-profile-d89350383890"  # the custom instructions, a session of their own
    assert report.created == [cid, profile, "chatgpt-sourdough-starter-2023-11-14"]
    assert report.problems == []
    u = {"role": "user", "speaker": "user"}
    a = {"role": "assistant", "speaker": "assistant"}
    assert raw(tmp_path, cid) == lines(
        {"type": "session", "id": cid, "started": "2024-05-03T08:42:00+00:00", "source": "chatgpt",
         "title": "Kyoto day with a toddler", "participants": ["user", "assistant"]},
        {"type": "turn", "n": 1, **u, "time": "2024-05-03T08:42:01+00:00", "text": "Plan a day in Kyoto with a toddler."},
        {"type": "turn", "n": 2, **a, "time": "2024-05-03T08:45:10+00:00",
         "text": "Start at the Kyoto Railway Museum.\nThen lunch at Nishiki Market."},
        {"type": "turn", "n": 3, **u, "time": "2024-05-03T08:46:40+00:00", "text": "[image]\nIs this stroller OK for the museum?"},
        {"type": "turn", "n": 4, **a, "time": "2024-05-03T08:47:00+00:00", "text": "Yes, the museum is step-free."},
    )
    text = raw(tmp_path, cid)
    for absent in ("Fushimi", "too early", "search(", "Lisbon", "Railway Museum ..."):
        assert absent not in text  # other branch, tool call, custom instructions, tool output
    assert raw(tmp_path, profile) == lines(
        {"type": "session", "id": profile, "started": "2024-05-03T08:42:00+00:00", "source": "chatgpt",
         "title": "ChatGPT custom instructions", "participants": ["user"]},
        {"type": "turn", "n": 1, **u, "time": "2024-05-03T08:42:00+00:00", "text": "I live in Lisbon.", "kind": "about-me"},
        {"type": "turn", "n": 2, **u, "time": "2024-05-03T08:42:00+00:00", "text": "Be brief.", "kind": "how-to-answer"},
    )


def test_chatgpt_custom_instructions_in_a_newer_export_lose_their_preamble_and_are_kept_once(tmp_path: Path) -> None:
    from dream.importers.chatgpt import read_chatgpt

    def conv(cid: str, when: float, profile: str) -> dict:
        hidden = {"is_visually_hidden_from_conversation": True}
        return {"id": cid, "title": cid, "create_time": when, "current_node": "b", "mapping": {
            "a": {"id": "a", "parent": None, "children": ["b"], "message": {
                "author": {"role": "user"}, "metadata": hidden, "content": {
                    "content_type": "user_editable_context",
                    "user_profile": "The user provided the following information about themselves.\nUser profile:\n```" + profile + "```",
                    "user_instructions": ""}}},
            "b": {"id": "b", "parent": "a", "children": [], "message": {
                "author": {"role": "user"}, "create_time": when, "content": {"content_type": "text", "parts": ["Hello"]}}}}}

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([conv("c2", 1_700_100_000, "I am Dain."), conv("c1", 1_700_000_000, "I am Dain."),
                                  conv("c3", 1_700_200_000, "I am Dain, in Berlin now.")]), encoding="utf-8")
    profiles = [s for s in read_chatgpt(export).sessions if s.id.startswith("chatgpt-profile-")]
    assert [(s.header.started, [t.text for t in s.turns]) for s in profiles] == [
        ("2023-11-14T22:13:20+00:00", ["I am Dain."]),  # the earliest conversation that carries it
        ("2023-11-17T05:46:40+00:00", ["I am Dain, in Berlin now."]),
    ]


def test_chatgpt_file_path_and_missing_current_node(tmp_path: Path, make_tree) -> None:
    convs = [{"id": "c1", "title": "t", "create_time": 1700000000, "current_node": "gone", "mapping": {
        "a": {"parent": None, "children": ["b", "c"], "message": {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["q"]}}},
        "b": {"parent": "a", "children": [], "message": {"author": {"role": "assistant"}, "content": {"content_type": "text", "parts": ["old"]}}},
        "c": {"parent": "a", "children": [], "message": {"author": {"role": "assistant"}, "content": {"content_type": "text", "parts": ["new"]}}},
    }}, {"title": "no mapping"}]
    src = make_tree(name="in", files={"conversations.json": json.dumps(convs)}) / "conversations.json"
    report = import_path("chatgpt", src, tmp_path / "brain")
    assert report.problems == [
        f"{src}: conversation 0 ('t'): 'current_node' is missing or unknown; followed the newest branch instead",
        f"{src}: conversation 1: not an object with a 'mapping' of messages; conversation skipped",
    ]
    session, _ = read_session(tmp_path / "brain" / "sessions" / "raw" / "chatgpt-c1.jsonl")
    assert [t.text for t in session.turns] == ["q", "new"]


def test_epoch_to_iso() -> None:
    assert epoch_to_iso(0) == "1970-01-01T00:00:00+00:00"
    assert epoch_to_iso(None) is None and epoch_to_iso(True) is None and epoch_to_iso(1e30) is None


# --- Claude Code -----------------------------------------------------------------------------


def test_claude_code_keeps_text_and_tool_calls_skips_sidechains(tmp_path: Path) -> None:
    report = import_path("claude-code", CASES["claude-code"], tmp_path)
    assert report.created == [CC_ID, CC_LATER]  # agent-*.jsonl holds only sidechain events: nothing to import
    assert report.problems == []
    u = {"role": "user", "speaker": "user"}
    a = {"role": "assistant", "speaker": "assistant"}
    long_bash = ("[tool: Bash — cd /home/ana/proj && python -m pytest tests/test_dates.py tests/test_times.py "
                 "tests/test_zones.py --maxf…]")
    assert len(long_bash) == TOOL_LINE_MAX
    assert raw(tmp_path, CC_ID) == lines(
        {"type": "session", "id": CC_ID, "started": "2026-01-20T11:57:20+00:00", "source": "claude-code",
         "title": "Fix failing date parser tests", "participants": ["user", "assistant"], "project": "proj",
         "cwd": "/home/ana/proj", "branch": "fix-dates", "version": "2.0.74"},
        {"type": "turn", "n": 1, **u, "time": "2026-01-20T11:57:20+00:00",
         "text": "The date parser tests fail since yesterday, can you look?"},
        {"type": "turn", "n": 2, **a, "time": "2026-01-20T11:57:24+00:00", "text": "Let me run the tests first."},
        {"type": "turn", "n": 3, **a, "time": "2026-01-20T11:57:25+00:00", "text": "[tool: Bash — pytest tests/test_dates.py -x -q]",
         "tools": [{"name": "Bash", "command": "pytest tests/test_dates.py -x -q", "description": "Run the date tests"}]},
        {"type": "turn", "n": 4, **a, "time": "2026-01-20T11:57:31+00:00", "text": "[tool: Task — Find the date parsing code]",
         "tools": [{"name": "Task", "description": "Find the date parsing code"}]},
        {"type": "turn", "n": 5, **a, "time": "2026-01-20T11:57:50+00:00",
         "text": "parse_iso drops the Z suffix. I'll fix it.\n[tool: Edit — /home/ana/proj/dates.py]",
         "tools": [{"name": "Edit", "file": "/home/ana/proj/dates.py"}],
         "results": [{"name": "Task", "description": "Find the date parsing code", "answer": "It is parse_iso in proj/dates.py."}]},
        {"type": "turn", "n": 6, **a, "time": "2026-01-20T11:57:55+00:00", "text": long_bash, "tools": [{
            "name": "Bash",
            "command": "cd /home/ana/proj && python -m pytest tests/test_dates.py tests/test_times.py tests/test_zones.py --maxfail=1 -q && git diff --stat",
            "description": "Run all date, time and zone tests"}]},
        {"type": "turn", "n": 7, **a, "time": "2026-01-20T11:58:05+00:00", "text": "All 14 tests pass now."},
        {"type": "turn", "n": 8, **u, "time": "2026-01-20T11:58:30+00:00",
         "text": "Great, thanks! Please remember I prefer pytest -q."},
    )
    text = raw(tmp_path, CC_ID)
    for absent in ("Caveat", "debug tests", "14 passed", "has been updated"):
        assert absent not in text  # meta, thinking, tool results that did not fail
    said = "".join(json.loads(line)["text"] for line in text.splitlines()[1:])
    assert "It is parse_iso" not in said  # the subagent's report: a Task's result, not speech


def test_claude_code_tool_calls_keep_their_task_list_and_a_failure_s_first_words(tmp_path: Path) -> None:
    import_path("claude-code", CASES["claude-code"], tmp_path)
    turns = [json.loads(line) for line in raw(tmp_path, CC_LATER).splitlines()[1:]]
    tools = {t["n"]: t["tools"] for t in turns if "tools" in t}
    assert tools[6] == [{"name": "Bash", "command": "python -m pytest -q tests/test_zones.py", "description": "Run the zone tests"}]
    # A result is read after its call, so the next turn carries it: a session imported while it is
    # written gets the same turns as one imported when it is done.
    assert turns[6]["results"] == [{"name": "Bash", "command": "python -m pytest -q tests/test_zones.py", "description": "Run the zone tests",
                                    "error": "ModuleNotFoundError: No module named 'pytz'"}]
    assert tools[7][1] == {"name": "TodoWrite", "todos": [{"content": "Accept +HH:MM offsets in parse_zone", "status": "completed"},
                                                          {"content": "Add a test for +09:00", "status": "pending"}]}
    assert all("Todos have been modified" not in t["text"] for t in turns)  # results are not turns


def test_a_summary_line_titles_the_session_whose_message_it_names_whichever_file_it_is_in(tmp_path: Path, make_tree) -> None:
    def said(sid: str, uuid: str, text: str) -> str:
        return json.dumps({"type": "user", "sessionId": sid, "uuid": uuid, "timestamp": "2026-01-01T00:00:00Z",
                           "message": {"role": "user", "content": text}}) + "\n"

    def summary(text: str, leaf: str) -> str:
        return json.dumps({"type": "summary", "summary": text, "leafUuid": leaf}) + "\n"

    src = make_tree(name="proj", files={  # b resumed a: Claude Code wrote a's summary at the top of b's file
        "a.jsonl": said("a", "a-1", "Fix the parser."),
        "b.jsonl": summary("Parser fix", "a-1") + summary("Zone offsets", "b-1") + said("b", "b-1", "Now the offsets."),
        "c.jsonl": summary("Untracked title", "gone-9") + said("c", "c-1", "Hello."),
    })
    titles = {s.id: s.header.title for s in read_claude_code(src).sessions}
    assert titles == {"a": "Parser fix", "b": "Zone offsets", "c": "Untracked title"}


def test_a_secret_in_a_tool_command_is_redacted_in_the_turn_s_tools(tmp_path: Path, make_tree) -> None:
    key = "sk-ant-api03-" + "x7Kq2" * 18
    event = {"type": "assistant", "sessionId": "s-1", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": f"curl -H 'x-api-key: {key}' https://api.example.com"}}]}}
    src = make_tree(name="proj", files={"a.jsonl": json.dumps(event) + "\n"})
    import_path("claude-code", src, tmp_path / "brain")
    text = (tmp_path / "brain" / "sessions" / "raw" / "s-1.jsonl").read_text(encoding="utf-8")
    assert key not in text and key[:20] not in text and "[REDACTED:" in json.loads(text.splitlines()[1])["tools"][0]["command"]


@pytest.mark.parametrize(
    ("name", "tool_input", "line"),
    [
        ("Bash", {"command": "ls -la"}, "[tool: Bash — ls -la]"),
        ("Read", {"file_path": "/a/b.py", "limit": 10}, "[tool: Read — /a/b.py]"),
        ("Custom", {"x": 1}, '[tool: Custom — {"x":1}]'),
        ("TodoWrite", {}, "[tool: TodoWrite]"),
        (None, "weird", "[tool: tool]"),
        ("Bash", {"command": "echo " + "x" * 300}, "[tool: Bash — echo " + "x" * 99 + "…]"),
    ],
)
def test_tool_line(name, tool_input, line: str) -> None:
    assert tool_line(name, tool_input) == line
    assert len(line) <= TOOL_LINE_MAX


def test_claude_code_bad_lines_and_unsafe_session_id(tmp_path: Path, make_tree) -> None:
    event = {"type": "user", "sessionId": "../../etc/passwd", "timestamp": "2026-01-01T00:00:00Z",
             "message": {"role": "user", "content": "hello"}}
    src = make_tree(name="proj", files={
        "a.jsonl": json.dumps(event) + "\n{not json\n[1]\n",
        "b.jsonl": "{\"hello\": 1}\n",
    })
    brain = tmp_path / "brain"
    report = import_path("claude-code", src, brain)
    safe = safe_session_id("../../etc/passwd")
    assert safe.startswith("etc-passwd-") and is_session_id(safe)
    assert report.created == [safe]
    assert report.problems == [
        f"{src / 'a.jsonl'}:2: malformed JSON (Expecting property name enclosed in double quotes); line skipped",
        f"{src / 'a.jsonl'}:3: an event must be a JSON object; line skipped",
        f"{src / 'a.jsonl'}: session id '../../etc/passwd' is not a safe file name; imported as {safe!r}",
        f"{src / 'b.jsonl'}: no Claude Code events (user/assistant/summary lines); is this a Claude Code transcript?",
    ]
    assert list(tree(tmp_path).keys()) == [f"brain/sessions/raw/{safe}.jsonl", "proj/a.jsonl", "proj/b.jsonl"]


# --- canonical jsonl -------------------------------------------------------------------------


def test_jsonl_import_validates_and_reports_bad_lines(tmp_path: Path) -> None:
    report = import_path("jsonl", CASES["jsonl"], tmp_path)
    assert report.created == ["2026-05-03-kyoto-planning", "2026-05-04-broken-line"]
    bad = CASES["jsonl"] / "2026-05-04-broken-line.jsonl"
    assert report.problems == [f"{bad}:3: malformed JSON (Unterminated string starting at); line skipped"]
    good = CASES["jsonl"] / "2026-05-03-kyoto-planning.jsonl"
    assert raw(tmp_path, "2026-05-03-kyoto-planning") == good.read_text()  # canonical in, same bytes out
    session, problems = read_session(tmp_path / "sessions" / "raw" / "2026-05-04-broken-line.jsonl")
    assert problems == [] and [t.n for t in session.turns] == [1, 3]


def test_jsonl_unsafe_header_id_is_sanitised(tmp_path: Path, make_tree) -> None:
    src = make_tree(name="in", files={"x.jsonl": lines(
        {"type": "session", "id": "../outside"}, {"type": "turn", "n": 1, "role": "user", "text": "hi"})}) / "x.jsonl"
    report = import_path("jsonl", src, tmp_path / "brain")
    safe = safe_session_id("../outside")
    assert report.created == [safe] and safe.startswith("outside-")
    assert report.problems == [f"{src}:1: session id '../outside' is not a safe file name; imported as {safe!r}"]
    assert json.loads(raw(tmp_path / "brain", safe).splitlines()[0])["id"] == safe


# --- common rules ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_reimport_changes_nothing(tmp_path: Path, fmt: str) -> None:
    first = import_path(fmt, CASES[fmt], tmp_path)
    before = tree(tmp_path)
    again = import_path(fmt, CASES[fmt], tmp_path)
    assert tree(tmp_path) == before
    assert (again.created, again.grown, again.unchanged) == ([], [], len(first.created))
    assert again.summary().startswith(f"{fmt} import from {CASES[fmt]}: 0 new, 0 grown (+0 turns), {len(first.created)} unchanged")


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_output_is_deterministic_and_reads_back_cleanly(tmp_path: Path, fmt: str) -> None:
    import_path(fmt, CASES[fmt], tmp_path / "one")
    import_path(fmt, CASES[fmt], tmp_path / "two")
    assert tree(tmp_path / "one") == tree(tmp_path / "two")
    for rel in tree(tmp_path / "one"):
        assert rel.startswith("sessions/raw/") and rel.endswith(".jsonl")  # no temp files left
        session, problems = read_session(tmp_path / "one" / rel)
        assert session is not None and problems == []


def _locomo_variant(make_tree, edit) -> Path:
    data = json.loads(CASES["locomo"].read_text())
    edit(data[0]["conversation"])
    return make_tree(name="in", files={"lo.json": json.dumps(data)}) / "lo.json"


def test_grown_conversation_appends_turns_without_touching_old_bytes(tmp_path: Path, make_tree) -> None:
    brain = tmp_path / "brain"
    import_path("locomo", CASES["locomo"], brain)
    path = brain / "sessions" / "raw" / "conv-90-s1.jsonl"
    old = path.read_bytes().replace(b'"n":1,', b'"n": 1, ')  # a hand-formatted line stays as it is
    path.write_bytes(old)
    src = _locomo_variant(make_tree, lambda c: c["session_1"].append({"speaker": "Ben", "dia_id": "D1:4", "text": "Cute!"}))
    report = import_path("locomo", src, brain)
    assert [g.model_dump() for g in report.grown] == [{"id": "conv-90-s1", "turns_before": 3, "turns_added": 1}]
    assert (report.created, report.unchanged) == ([], 1)
    assert path.read_bytes() == old + lines(
        {"type": "turn", "n": 4, "role": "user", "speaker": "Ben", "time": "2023-05-08T13:56:00", "text": "Cute!"}
    ).encode()
    assert report.summary().splitlines()[0].endswith("0 new, 1 grown (+1 turns), 1 unchanged")


def test_changed_turn_is_never_rewritten(tmp_path: Path, make_tree) -> None:
    brain = tmp_path / "brain"
    import_path("locomo", CASES["locomo"], brain)
    before = tree(brain)

    def edit(conv):
        conv["session_1"][1]["text"] = "Rewritten history."
        conv["session_1"].append({"speaker": "Ben", "dia_id": "D1:4", "text": "Cute!"})

    report = import_path("locomo", _locomo_variant(make_tree, edit), brain)
    assert tree(brain) == before
    assert (report.created, report.grown, report.unchanged) == ([], [], 2)
    assert report.problems[-2:] == [
        "sessions/raw/conv-90-s1.jsonl: turn 2 differs from the input; kept the existing text (turns are never "
        "rewritten); import the changed conversation under a new id to keep both",
        "sessions/raw/conv-90-s1.jsonl: 1 new turn(s) were not appended because earlier turns differ",
    ]


def test_turn_missing_in_the_middle_is_not_inserted(tmp_path: Path, make_tree) -> None:
    brain = tmp_path / "brain"
    import_path("locomo", CASES["locomo"], brain)
    src = _locomo_variant(make_tree, lambda c: c["session_2"].insert(2, {"speaker": "Ana", "dia_id": "D2:3", "text": "late"}))
    before = tree(brain)
    report = import_path("locomo", src, brain)
    assert tree(brain) == before
    assert report.problems == [
        "sessions/raw/conv-90-s2.jsonl: turn 3 is missing here but new turns can only be appended after turn 4; skipped"
    ]


def test_id_collisions_are_resolved_in_input_order(tmp_path: Path, make_tree) -> None:
    brain = make_tree(name="brain", files={"sessions/raw/CHATGPT-dup.jsonl": lines(
        {"type": "session", "id": "CHATGPT-dup"}, {"type": "turn", "n": 1, "role": "user", "text": "other"})})
    conv = {"id": "dup", "current_node": "m", "mapping": {"m": {"parent": None, "message": {
        "author": {"role": "user"}, "content": {"content_type": "text", "parts": ["first"]}}}}}
    second = json.loads(json.dumps(conv))
    second["mapping"]["m"]["message"]["content"]["parts"] = ["second"]
    src = make_tree(name="in", files={"conversations.json": json.dumps([conv, second])}) / "conversations.json"
    for _ in range(2):  # the same names again on re-import
        report = import_path("chatgpt", src, brain)
    assert sorted(tree(brain)) == ["sessions/raw/CHATGPT-dup.jsonl", "sessions/raw/chatgpt-dup-2.jsonl",
                                   "sessions/raw/chatgpt-dup-3.jsonl"]
    assert report.problems == [
        "session id 'chatgpt-dup' is already used by another session; imported as 'chatgpt-dup-2'",
        "session id 'chatgpt-dup' is already used by another session; imported as 'chatgpt-dup-3'",
    ]
    assert "first" in raw(brain, "chatgpt-dup-2") and "second" in raw(brain, "chatgpt-dup-3")


@pytest.mark.parametrize("raw_id", ["../x", "a/b", "con", "..", "", "x" * 200, "Ünïcode id", "a..b", ".hidden"])
def test_safe_session_id(raw_id: str) -> None:
    safe = safe_session_id(raw_id)
    assert is_session_id(safe) and "/" not in safe
    assert safe_session_id(raw_id) == safe  # stable across imports
    assert safe_session_id("fine-id_1.2") == "fine-id_1.2"


@pytest.mark.parametrize("fmt", ["chatgpt", "locomo", "longmemeval"])
def test_bad_json_names_the_file_and_imports_nothing(tmp_path: Path, make_tree, fmt: str) -> None:
    src = make_tree(name="in", files={"bad.json": '[{"a": 1,]'}) / "bad.json"
    report = import_path(fmt, src, tmp_path / "brain")
    assert report.problems == [f"{src}:1:10: malformed JSON (Expecting property name enclosed in double quotes); fix or re-export the file"]
    assert report.created == [] and not (tmp_path / "brain").exists()


@pytest.mark.parametrize(("fmt", "what"), [("chatgpt", "conversations or one conversation"), ("locomo", "LoCoMo samples"),
                                           ("longmemeval", "LongMemEval items")])
def test_wrong_shape_names_the_file(tmp_path: Path, make_tree, fmt: str, what: str) -> None:
    src = make_tree(name="in", files={"x.json": '{"a": 1}'}) / "x.json"
    report = import_path(fmt, src, tmp_path / "brain")
    assert report.problems == [f"{src}: expected a JSON list of {what}, got dict; nothing imported"]


def test_missing_path_and_unknown_format(tmp_path: Path) -> None:
    report = import_path("locomo", tmp_path / "nope.json", tmp_path / "brain")
    assert report.problems == [f"{tmp_path / 'nope.json'}: does not exist; check the path"]
    with pytest.raises(ValueError, match="unknown import format 'csv'"):
        read_source("csv", tmp_path)
    assert sorted(IMPORTERS) == sorted(CASES)


def test_file_changed_after_planning_is_not_overwritten(tmp_path: Path) -> None:
    parsed = read_source("longmemeval", CASES["longmemeval"])
    writes, _ = plan_import("longmemeval", str(CASES["longmemeval"]), parsed.sessions, {})
    (tmp_path / "sessions" / "raw").mkdir(parents=True)
    (tmp_path / "sessions" / "raw" / "q001-answer_b2.jsonl").write_text("edited meanwhile\n")
    written, problems = apply_import(writes, tmp_path)
    assert written == {"q001-sharegpt_a1", "q002_abs-sharegpt_a1"}
    assert problems == ["sessions/raw/q001-answer_b2.jsonl: changed while importing; skipped, import again"]
    assert raw(tmp_path, "q001-answer_b2") == "edited meanwhile\n"


def test_import_never_touches_git(tmp_path: Path, make_tree) -> None:
    brain = make_tree(name="brain", files={"guide.md": "# guide\n"})
    git(brain, "init", "-q", "-b", "main")
    git(brain, "add", "-A")
    git(brain, "commit", "-q", "--allow-empty", "-m", "start")
    head = git(brain, "rev-parse", "HEAD")
    import_path("locomo", CASES["locomo"], brain)
    assert git(brain, "rev-parse", "HEAD") == head
    assert git(brain, "diff", "--cached", "--name-only") == ""
    assert git(brain, "status", "--porcelain") == "?? sessions/\n"


# --- CLI -------------------------------------------------------------------------------------


def test_cli_import_prints_summary_and_warnings(tmp_path: Path) -> None:
    src = tmp_path / "locomo.json"
    shutil.copy(CASES["locomo"], src)
    result = CliRunner().invoke(main, ["import", "locomo", str(src), "--brain", str(tmp_path / "brain")])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"locomo import from {src}: 2 new, 0 grown (+0 turns), 0 unchanged\n"
        "1 problem found; everything else was imported\n"
    )
    assert result.stderr == f"warning: {src}: conv-90 session 2: no turn 3 (dia_id gap); other turns keep their dia_id numbers\n"
    again = CliRunner().invoke(main, ["import", "locomo", str(src), "--brain", str(tmp_path / "brain"), "--json"])
    report = json.loads(again.stdout)
    assert (report["format"], report["created"], report["grown"], report["unchanged"]) == ("locomo", [], [], 2)


def test_cli_rejects_unknown_format(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["import", "csv", str(tmp_path)])
    assert result.exit_code == 2 and "Invalid value for 'FORMAT'" in result.output


def test_claude_code_session_still_being_written_grows_by_appending(tmp_path: Path, make_tree) -> None:
    full = (CASES["claude-code"] / f"{CC_ID}.jsonl").read_text().splitlines(keepends=True)
    proj = make_tree(name="proj", files={f"{CC_ID}.jsonl": "".join(full[:8])})
    brain = tmp_path / "brain"
    assert import_path("claude-code", proj, brain).created == [CC_ID]
    early = raw(brain, CC_ID)
    (proj / f"{CC_ID}.jsonl").write_text("".join(full))
    report = import_path("claude-code", proj, brain)
    assert [(g.id, g.turns_before, g.turns_added) for g in report.grown] == [(CC_ID, 4, 4)]
    assert report.problems == []
    reference = tmp_path / "reference"
    import_path("claude-code", CASES["claude-code"], reference)
    assert raw(brain, CC_ID) == raw(reference, CC_ID) and raw(brain, CC_ID).startswith(early)


@pytest.mark.parametrize(
    ("fmt", "name", "data", "where", "unsafe"),
    [
        ("chatgpt", "conversations.json",
         [{"id": "../../evil", "current_node": "m", "mapping": {"m": {"parent": None, "message": {
             "author": {"role": "user"}, "content": {"content_type": "text", "parts": ["hi"]}}}}}],
         ": conversation 0", "chatgpt-../../evil"),
        ("locomo", "lo.json",
         [{"sample_id": "../x", "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023",
                                                 "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}],
         ": ../x session 1", "../x-s1"),
        ("longmemeval", "lme.json",
         [{"question_id": "q/1", "haystack_dates": ["2023/05/20 (Sat) 02:21"], "haystack_session_ids": ["s1"],
           "haystack_sessions": [[{"role": "user", "content": "hi"}]]}],
         ": item 0 (q/1) session s1", "q/1-s1"),
    ],
)
def test_unsafe_ids_stay_inside_sessions_raw(tmp_path: Path, make_tree, fmt, name, data, where, unsafe) -> None:
    src = make_tree(name="in", files={name: json.dumps(data)}) / name
    report = import_path(fmt, src, tmp_path / "brain")
    [sid] = report.created
    assert is_session_id(sid)
    assert sid == safe_session_id(unsafe)
    assert report.problems == [f"{src}{where}: session id {unsafe!r} is not a safe file name; imported as {sid!r}"]
    assert list(tree(tmp_path / "brain")) == [f"sessions/raw/{sid}.jsonl"]


def test_a_chatgpt_file_holding_one_conversation_object_is_imported(tmp_path: Path):
    from dream.importers import import_path

    export = json.loads((SAMPLES / "chatgpt-export" / "conversations.json").read_text(encoding="utf-8"))
    one = tmp_path / "one.json"
    one.write_text(json.dumps(export[0]), encoding="utf-8")
    brain = tmp_path / "memory"
    brain.mkdir()
    report = import_path("chatgpt", one, brain)
    assert len(report.created) == 2 and report.problems == []  # the conversation and its custom instructions
    wrong = tmp_path / "wrong.json"
    wrong.write_text('"just a string"', encoding="utf-8")
    bad = import_path("chatgpt", wrong, brain)
    assert bad.read_nothing and "expected a JSON list of conversations or one conversation, got str" in bad.problems[0]


def test_an_import_tells_its_progress_reading_then_each_session_written(tmp_path: Path) -> None:
    heard: list[tuple[str, int, int]] = []
    source = Path(__file__).resolve().parents[2] / "fixtures" / "nadia" / "sessions" / "raw"
    report = import_path("jsonl", source, tmp_path / "brain", progress=lambda *a: heard.append(a))
    assert len(report.created) == 15
    assert heard == [("reading", 0, 0)] + [("writing", n, 15) for n in range(1, 16)]
