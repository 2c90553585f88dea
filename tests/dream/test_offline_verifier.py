"""The offline verifier reads negation: a claim that denies what its turn affirms (or the other
way round) is contradicted, not supported because its words are there."""

from __future__ import annotations

import pytest

from dream.backends import get_backend
from dream.backends.base import VerifyRequest


@pytest.mark.parametrize(("claim", "turn", "label"), [
    ("Nadia works at Lumen Research.", "Nadia: I no longer work at Lumen Research.", "contradicted"),
    ("Nadia does not work at Lumen Research.", "Nadia: I work at Lumen Research as a researcher.", "contradicted"),
    ("Aiko is the coordinator.", "Nadia: Aiko is not the coordinator, she is the director.", "contradicted"),
    ("Aiko is not the coordinator.", "Nadia: Aiko is not the coordinator, she is the director.", "supported"),
    ("The second workshop is in Sendai, not Sapporo.", "Nadia: No — the second workshop is in Sendai, not Sapporo.", "supported"),
    ("Nadia's script fails and Nadia does not know why.", "Nadia: My script fails and I don't know why.", "supported"),
    ("Jon shared a photo of a pink sign.", "Jon: Can't wait! [image: a photo of a pink sign]", "supported"),  # another clause
    ("Keep it to the standard library, no new dependencies.", "user: Keep it to the standard library, no new dependencies.", "supported"),
])
def test_negation(claim: str, turn: str, label: str) -> None:
    verdict = get_backend("offline").verify(VerifyRequest(claim=claim, evidence=[turn], context=""))
    assert verdict.label == label, verdict.reason
