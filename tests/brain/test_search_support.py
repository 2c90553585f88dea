"""Shared by the search and context tests: the retrieval fixture Brain and a small injected embedder.

No tests here. The embedder is a real (tiny) model passed in through `Searcher.open(embedder=…)`,
so dense search runs our own code end to end without wordllama.
"""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "retrieval"
# Words that mean the same thing share a dimension, so dense search finds paraphrases.
CONCEPTS = {
    "violin": 0, "music": 0, "instrument": 0, "lessons": 0,
    "puppy": 1, "dog": 1, "pepper": 1, "pet": 1,
    "job": 2, "work": 2, "works": 2, "joined": 2, "employer": 2, "studio": 2,
}


class ConceptEmbedder:
    """Bag of words over 16 dimensions: a concept's dimension, or a hash bucket for other words."""

    name = "test-concepts-16"
    dim = 16

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[i, CONCEPTS.get(word, 4 + zlib.crc32(word.encode()) % 12)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def retrieval_brain(tmp_path: Path) -> Path:
    """A fresh copy of fixtures/retrieval (the index is written under its .dream/cache/)."""
    root = tmp_path / "brain"
    shutil.copytree(FIXTURE, root)
    return root
