"""Shared test fixtures: the network safety net, a `files={}` tree builder, a git Brain builder."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from testenv import TEST_GIT_ENV

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures"

_real_connect = socket.socket.connect


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _offline_safety_net(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model credentials, no network but loopback, a fixed git identity, no user git config."""
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_")) or name == "BRAIN_HOME":
            monkeypatch.delenv(name, raising=False)

    def guarded_connect(self, address):
        if not _is_loopback(address):
            raise ConnectionRefusedError(f"tests may not reach the network: {address!r}")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    for key, value in TEST_GIT_ENV.items():
        monkeypatch.setenv(key, value)


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create `files` (relative path → text or bytes) under root; returns root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def make_tree(tmp_path: Path):
    """make_tree({path: text}) → a folder with exactly those files."""

    def _make(files: dict[str, str | bytes], name: str = "brain") -> Path:
        return write_files(tmp_path / name, files)

    return _make


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def nadia(tmp_path: Path) -> Path:
    """A copy of the hand-written Nadia Brain, committed in a fresh git repository."""
    dest = tmp_path / "nadia"
    shutil.copytree(FIXTURES / "nadia", dest)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", "fixture")
    return dest
