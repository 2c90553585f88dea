"""DirTree reads files by `os.read` (brain.tree.read_fd): every byte, whatever the size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from brain.tree import DirTree, read_fd


@pytest.mark.parametrize("size", [0, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, (1 << 20) + (1 << 16) + 7, 3 << 20])
def test_a_file_of_any_size_is_read_whole(tmp_path: Path, size: int):
    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    (tmp_path / "f.md").write_bytes(data)
    tree = DirTree(tmp_path)
    assert tree.read_bytes("f.md") == data
    assert tree.read_if_exists("f.md") == data
    fd = os.open(tmp_path / "f.md", os.O_RDONLY)
    try:
        os.lseek(fd, min(size, 5), os.SEEK_SET)
        assert read_fd(fd) == data[min(size, 5):]  # what is left, from where the file stands
    finally:
        os.close(fd)


def test_read_bytes_raises_as_open_does(tmp_path: Path):
    (tmp_path / "folder.md").mkdir()
    tree = DirTree(tmp_path)
    with pytest.raises(FileNotFoundError):
        tree.read_bytes("missing.md")
    with pytest.raises(IsADirectoryError):
        tree.read_bytes("folder.md")
