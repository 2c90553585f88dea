"""brain/secret_rules.json holds detect-secrets' rules as the installed package gives them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from brain.secrets import secret_spans

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_secret_rules", ROOT / "scripts" / "gen_secret_rules.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rules_file_is_what_detect_secrets_gives_run_the_script_when_it_is_not():
    on_disk = json.loads((ROOT / "brain" / "secret_rules.json").read_text(encoding="utf-8"))
    assert on_disk == _generator().rules(), "run `.venv/bin/python scripts/gen_secret_rules.py` and review the diff"


def test_every_rule_of_the_file_runs_behind_a_gate():
    """A text that opens every gate runs every rule: a plugin without a gate would raise here."""
    rules = json.loads((ROOT / "brain" / "secret_rules.json").read_text(encoding="utf-8"))["rules"]
    assert len(rules) >= 20
    text = "AKIA aws AccountKey :// @ cl cloudant.com key pw pass token secret . M N O 1 : ghp_ glpat- eyJ -us _authToken " \
           "T3BlbkFJ PRIVATE KEY pypi- SG. xox sl softlayer sq0csp- k_live_ AC SK"
    assert secret_spans(text) == []
    assert secret_spans("bot " + "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs")[0][2] == "discord-bot-token"
