"""`brain serve` in process (starlette's TestClient): every view, escaping, 404s, GET only.

The Brain is SMALL_BRAIN committed in git, plus a page and a session written by an attacker:
their `<script>` and `onerror=` must reach the browser as text, never as markup.
"""

from __future__ import annotations

import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from brain.web.app import build_app

SCRIPT = "<script>window.pwned=1</script>"
IMG = '<img src=x onerror="window.pwned=1">'
HOSTILE_PAGE = f"""\
---
title: 'Hostile {IMG}'
type: concept
summary: 'A summary with {SCRIPT}'
created: 2026-05-03
updated: 2026-05-03
sources:
  1: session:evil#t1
---
# Hostile

Text with {SCRIPT} and {IMG} inline, a [link](javascript:alert(1)) and [[juds|{IMG}]] [cite:1].

<div onmouseover="window.pwned=1">a raw HTML block</div>
"""
HOSTILE_SESSION = (
    '{"type":"session","id":"evil","started":"2026-05-04T10:00:00+09:00","title":"<script>window.pwned=1</script>"}\n'
    '{"type":"turn","n":1,"role":"user","speaker":"<img src=x onerror=window.pwned=1>","text":"<script>window.pwned=1</script> hi"}\n'
    '{"type":"turn","n":2,"role":"assistant","kind":"tool","tool":"Bash","command":"echo \'<img src=x onerror=alert(1)>\'","text":"ran it"}\n'
)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def brain(small_brain: Path) -> Path:
    root = small_brain
    (root / "knowledge/concepts/hostile.md").write_text(HOSTILE_PAGE, encoding="utf-8")
    (root / "sessions/raw/evil.jsonl").write_text(HOSTILE_SESSION, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Compiled 2 session(s)\n\nRejected: knowledge/x.md: C001 no source\n\nDream-Run: r1\nDream-Sessions: 2")
    return root


@pytest.fixture
def client(brain: Path):
    # One event loop thread for every request, as uvicorn runs it: the search index is a SQLite connection of that thread.
    with TestClient(build_app(brain, "none", hosts=("testserver",))) as client:
        yield client


class _Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _markup_is_ours(html: str) -> None:
    """No script but our own files, no event-handler attribute, no javascript: link, no planted tag."""
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag != "script" or attrs.get("src", "").startswith("/static/"), (tag, attrs)
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        assert not str(attrs.get("href", "")).lower().startswith("javascript:"), (tag, attrs)
        assert tag not in ("img", "div") or not attrs.get("src") == "x", (tag, attrs)
    assert SCRIPT not in html and "<img src=x" not in html


def test_every_view_answers_with_what_it_shows(client: TestClient, brain: Path):
    home = client.get("/")
    assert home.status_code == 200 and 'href="/page/nadia-rahman"' in home.text
    assert "C001 no source" in home.text and "r1" in home.text  # the last run: its rejection and trailers
    page = client.get("/page/nadia-rahman")
    assert page.status_code == 200 and "<h1>Nadia Rahman</h1>" in page.text
    assert '<a class="wikilink" href="/page/juds">the sprint</a>' in page.text
    assert 'href="/session/s1?turns=t1-t1#t1"' in page.text  # [cite:1] → the cited turn in its session
    assert 'href="/page/juds">Japan Universal Design Sprint</a>' in page.text  # linked from
    session = client.get("/session/s1?turns=t1-t2")
    assert session.status_code == 200 and 'id="t1" class="turn role-user kind-speech cited"' in session.text
    assert 'href="/page/juds">Japan Universal Design Sprint</a>' in session.text  # the pages that cite it
    tool = client.get("/session/evil").text  # a tool call is shown as one: its tool and command, its text as code
    assert 'class="turn role-assistant kind-tool"' in tool and "<dt>tool</dt><dd><code>Bash</code></dd>" in tool
    evidence = client.get("/cite/2/knowledge/projects/juds.md")
    assert evidence.status_code == 200 and "Kyoto workshop" in evidence.text
    sha = git(brain, "rev-parse", "HEAD").strip()
    diff = client.get(f"/diff/{sha[:12]}/knowledge/projects/juds.md")
    assert diff.status_code == 200 and '<span class="add">+title: Japan Universal Design Sprint</span>' in diff.text
    assert "JUDS" in client.get("/search?q=JUDS").text
    context = client.get("/context?q=Who+leads+JUDS&budget=400")
    assert context.status_code == 200 and "Admitted:" in context.text and "guide.md" not in context.text
    assert client.get("/graph").status_code == 200 and client.get("/sessions").status_code == 200


def test_the_graph_data_holds_pages_only_with_type_and_weights(client: TestClient):
    data = client.get("/graph.json").json()
    nodes = {n["id"]: n for n in data["nodes"]}
    assert set(nodes) == {"nadia-rahman", "juds", "universal-design", "hostile"}  # no note, no summary
    assert nodes["juds"] == {"id": "juds", "title": "Japan Universal Design Sprint", "type": "project", "links": 4, "cites": 2,
                             "url": "/page/juds"}
    assert {"source": "nadia-rahman", "target": "juds"} in data["links"]


@pytest.mark.parametrize("url", ["/", "/page/hostile", "/session/evil?turns=t1", "/graph.json", "/search?q=pwned",
                                 "/context?q=pwned+window&budget=2000", "/page/%3Cscript%3E"])
def test_a_script_or_an_onerror_in_a_page_or_a_transcript_is_text(client: TestClient, url: str):
    response = client.get(url)
    assert response.status_code in (200, 404)
    if url == "/graph.json":  # JSON: the title is data, and graph.js escapes it for the tooltip
        assert {"id": "hostile", "title": f"Hostile {IMG}"}.items() <= next(n for n in response.json()["nodes"]
                                                                             if n["id"] == "hostile").items()
        return
    _markup_is_ours(response.text)
    assert "script-src 'self'" in response.headers["content-security-policy"]
    if url == "/page/hostile":
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in response.text
        assert "&lt;div onmouseover=" in response.text  # a raw HTML block is shown, not built


def test_unknown_pages_sessions_commits_and_routes_are_404(client: TestClient):
    for url in ("/page/no-such-page", "/session/no-such-session", "/diff/0123456789ab/knowledge/projects/juds.md",
                "/diff/--output=x/knowledge/projects/juds.md", "/cite/9/knowledge/projects/juds.md", "/nothing-here"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "Not found" in response.text
    assert "did you mean" in client.get("/page/nadia-rahmen").text


def test_nothing_but_get_is_answered(client: TestClient):
    for url in ("/", "/page/juds", "/session/s1", "/search?q=x", "/context?q=x", "/graph.json", "/static/style.css"):
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert client.request(method, url).status_code == 405, (method, url)


def test_a_bad_parameter_says_why(client: TestClient):
    response = client.get("/context?q=x&budget=5")
    assert response.status_code == 400 and "budget must be a number from 100 to 50000" in response.text


def test_another_site_pointing_its_name_at_loopback_is_refused(brain: Path):
    client = TestClient(build_app(brain, "none"), base_url="http://evil.example")
    assert client.get("/").status_code == 400
    assert TestClient(build_app(brain, "none"), base_url="http://127.0.0.1:8765").get("/").status_code == 200


def test_a_page_shows_as_soon_as_it_is_written_and_joins_the_graph_with_its_commit(client: TestClient, brain: Path):
    assert client.get("/graph.json").status_code == 200  # the graph of this HEAD is built
    (brain / "knowledge/concepts/fresh.md").write_text(
        "---\ntitle: Fresh\ntype: concept\ncreated: 2026-06-01\nupdated: 2026-06-01\n---\n# Fresh\n\nAbout [[juds]].\n", encoding="utf-8")
    assert "About" in client.get("/page/fresh").text  # read from disk at each request
    assert "fresh" not in {n["id"] for n in client.get("/graph.json").json()["nodes"]}  # the graph is HEAD's
    git(brain, "add", "-A")
    git(brain, "commit", "-q", "-m", "a page by hand")
    assert "fresh" in {n["id"] for n in client.get("/graph.json").json()["nodes"]}
    assert 'href="/page/fresh">Fresh</a>' in client.get("/page/juds").text
