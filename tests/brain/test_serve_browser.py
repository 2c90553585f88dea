"""`brain serve` as a real process, driven in headless Chromium (Debian's `chromium`, Playwright).

The demo Brain gets a page and a session written by an attacker (`<script>`, `onerror=`); every
view is opened, a citation is clicked through to its highlighted turn, a node of the graph is
clicked through to its page, and `window.pwned` must stay undefined. Screenshots of each view go
to artifacts/screenshots/ (git-ignored), kept by CI as artifacts. Without a browser the test is
skipped, except under CI (`CI` set), where it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
HOSTILE_PAGE = """\
---
title: 'Injected <img src=x onerror="window.pwned=1">'
type: concept
summary: 'Planted <script>window.pwned=1</script>'
created: 2026-07-15
updated: 2026-07-15
sources:
  1: session:zz-injected#t2
---
# Injected

<script>window.pwned=1</script> and <img src=x onerror="window.pwned=1"> written into a page,
linking to [[nadia-rahman|<img src=x onerror="window.pwned=1">]] [cite:1].
"""
HOSTILE_SESSION = (
    '{"type":"session","id":"zz-injected","started":"2026-07-15T09:00:00+09:00"}\n'
    '{"type":"turn","n":1,"role":"user","speaker":"Nadia","text":"<script>window.pwned=1</script>"}\n'
    '{"type":"turn","n":2,"role":"assistant","text":"<img src=x onerror=\\"window.pwned=1\\"> noted"}\n'
)


def _browser_or_skip():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a browser: chromium at {CHROMIUM} and playwright (.ci/run installs both)")
        pytest.skip("no chromium or playwright here (apt-get install chromium; pip install -e '.[test]')")
    return sync_playwright


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The URL of `brain serve` on the demo Brain with the planted page and session."""
    root = tmp_path_factory.mktemp("serve") / "nadia"
    subprocess.run([sys.executable, "-m", "dream.cli", "demo", str(root)], check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "DREAM_NOW": "2026-07-15T02:00:00Z"})
    (root / "knowledge/concepts/injected.md").write_text(HOSTILE_PAGE, encoding="utf-8")
    (root / "sessions/raw/zz-injected.jsonl").write_text(HOSTILE_SESSION, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Planted: a page and a session that try to run scripts")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "brain.cli", "serve", "--brain", str(root), "--port", str(port), "--embedder", "none"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"brain serve did not start: {proc.communicate()[0].decode(errors='replace')}")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


def test_every_view_in_a_real_browser_and_no_planted_script_runs(server: str, tmp_path: Path):
    sync_playwright = _browser_or_skip()
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM, args=ARGS,
                                                       headless=True, viewport={"width": 1280, "height": 900})
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        def visit(path: str, shot: str) -> None:
            page.goto(server + path)
            page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=shot != "graph")
            assert page.evaluate("typeof window.pwned") == "undefined", path

        visit("/", "home")
        assert page.locator("ol.runs li").first.inner_text().count("Compiled 15 session(s)") == 0  # the planted commit is last
        assert "Compiled 15 session(s)" in page.locator("ol.runs").inner_text() and page.locator("dl.counts").is_visible()
        visit("/page/nadia-rahman", "page")
        page.locator("article a.cite").first.click()  # [cite:1]: the cited turn, inside its session
        page.wait_for_url("**/session/2026-03-04-job-search?turns=t7-t7#t7")
        cited = page.locator("#t7")
        assert "cited" in (cited.get_attribute("class") or "") and cited.is_visible()
        assert cited.evaluate("el => el.matches(':target') && el.getBoundingClientRect().top < window.innerHeight")
        page.screenshot(path=str(SHOTS / "session.png"), full_page=True)
        visit("/page/injected", "injected-page")
        assert page.locator("article").inner_text().count("<script>window.pwned=1</script>") == 2  # summary and body, as text
        visit("/session/zz-injected?turns=t1-t2", "injected-session")
        assert page.locator("#t2 .text").inner_text().startswith('<img src=x onerror="window.pwned=1">')
        _graph(page, server, visit)
        page.locator("form.quick input").fill("figures PDF")
        page.keyboard.press("Enter")
        page.wait_for_url("**/search?q=figures+PDF")
        assert page.locator("ol.hits li").count() > 0
        page.screenshot(path=str(SHOTS / "search.png"), full_page=True)
        visit("/context?q=What+does+Nadia+prefer+for+figures%3F&budget=1000", "context")
        assert page.locator("tr.admitted").count() > 0 and page.locator("tr.rejected").count() > 0
        assert page.evaluate("typeof window.pwned") == "undefined" and errors == []
        browser.close()


def _graph(page, server: str, visit) -> None:
    """The graph draws every page; a click on a node opens that page."""
    visit("/graph", "graph")
    page.wait_for_selector("#graph[data-ready]", timeout=20_000)
    assert int(page.get_attribute("#graph", "data-nodes")) == 23  # the demo's 22 pages and the planted one
    page.wait_for_timeout(600)  # the zoom to fit the pages eases in over 400 ms
    page.screenshot(path=str(SHOTS / "graph.png"))
    x, y = page.evaluate("""() => { const g = document.getElementById('graph').forceGraph;
        const n = g.graphData().nodes.find(n => n.id === 'nadia-rahman'); const c = g.graph2ScreenCoords(n.x, n.y);
        const box = document.querySelector('#graph canvas').getBoundingClientRect(); return [box.left + c.x, box.top + c.y]; }""")
    page.mouse.move(x, y)
    page.wait_for_timeout(200)  # the graph finds the node under the pointer on its next frame
    page.mouse.click(x, y)
    page.wait_for_url(f"{server}/page/nadia-rahman")
