"""A normal `pip install .` (a wheel, not an editable install) works like a checkout: the demo
finds its sessions and the model backends find the Dream skill."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_carries_the_bundled_files_and_its_demo_runs_away_from_the_checkout(tmp_path: Path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("brain_dream-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"dream/bundled/skills/dream/SKILL.md", "dream/bundled/skills/brain/SKILL.md", "brain/templates/init_gitignore.j2",
            "brain/secret_rules.json", "dream/prompts/system.j2", "brain/web/templates/page.html",
            "brain/web/static/force-graph.min.js", "brain/web/static/force-graph.LICENSE", "brain/web/static/style.css"} <= names
    assert any(n.startswith("dream/bundled/nadia/sessions/raw/") for n in names)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "DREAM_NOW": "2026-07-15T02:00:00Z"}
    demo = subprocess.run([sys.executable, "-m", "dream.cli", "demo", str(tmp_path / "d1")], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    assert f"Try: brain index --brain {tmp_path / 'd1'}" in demo.stdout
    skill = subprocess.run([sys.executable, "-c", "import dream.backends.llm as m; print(m.SKILL); print(m.SKILL.is_file())"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60)
    assert skill.stdout.split() == [str(site / "dream/bundled/skills/dream/SKILL.md"), "True"], skill.stderr
    index = subprocess.run([sys.executable, "-m", "brain.cli", "index", "--brain", str(tmp_path / "d1")], cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=60)
    assert index.returncode == 0 and index.stdout.startswith("# Index")
    serve = ("from starlette.testclient import TestClient; from brain.web.app import build_app; import sys\n"
             "with TestClient(build_app(sys.argv[1], 'none', ('testserver',))) as c:\n"
             "    print(c.get('/page/nadia-rahman').status_code, c.get('/static/force-graph.min.js').status_code)")
    web = subprocess.run([sys.executable, "-c", serve, str(tmp_path / "d1")], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60)
    assert web.stdout.split() == ["200", "200"], web.stderr  # templates and vendored files are served from the wheel
