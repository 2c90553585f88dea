"""A view's focus (the files a run staged) is looked up in the sorted listing, not tested file by file."""

from __future__ import annotations

import random

import pytest

from brain.view import _sorted_among


@pytest.mark.parametrize("seed", range(20))
def test_the_focus_among_a_sorted_listing_is_the_listing_filtered(seed: int):
    rng = random.Random(seed)
    names = [f"{rng.choice(['knowledge/people', 'notes/owner', 'notes/ada', 'sessions/summaries'])}/{rng.randrange(200)}.md"
             for _ in range(rng.randrange(0, 300))]
    listing = sorted(set(names))
    wanted = set(rng.sample(listing, min(len(listing), rng.randrange(0, 20)))) | {f"notes/x/{rng.randrange(9)}.md" for _ in range(3)}
    assert _sorted_among(listing, wanted) == [p for p in listing if p in wanted]
