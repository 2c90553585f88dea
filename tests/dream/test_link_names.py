"""The offline backend's name linking: `mentions` finds what the regex it replaced finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dream.backends.offline import link_names, mentions


def _by_regex(text: str, names: list[str]) -> list[tuple[int, int]]:
    """The pattern link_names compiled for each statement before (longest names first)."""
    pattern = re.compile(r"(?<![\w\[|])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w\]])")
    return [m.span() for m in pattern.finditer(text)]


# Few letters, so names overlap, nest and touch; the characters that bound a mention; a non-ASCII
# letter and digit (\w is Unicode), and "é" made of two code points.
_ALPHABET = st.sampled_from(list("abAB _-|[]().'1") + ["é", "é", "٣", "ß"])
_NAME = st.text(_ALPHABET, min_size=1, max_size=5)


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(text=st.text(_ALPHABET, max_size=40), names=st.lists(_NAME, min_size=1, max_size=5, unique=True))
@example(text="a b", names=["a b", "b"])  # a name inside a longer one's mention is not found again
@example(text="[a|a] a", names=["a"])  # a link's inside is no mention
@example(text="éa a_ 1a a", names=["a"])  # nor is a name inside a word, whatever its script
def test_mentions_are_the_regexs_matches(text: str, names: list[str]) -> None:
    present = sorted((n for n in names if n in text), key=lambda n: (-len(n), n))
    if present:
        assert mentions(text, present) == _by_regex(text, present)


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("Sora City Lab hired Mina.", "[[sora-city-lab|Sora City Lab]] hired [[mina|Mina]]."),
        # The longest name wins; a second mention stays text.
        ("Sora City Lab is not Sora; Sora again.", "[[sora-city-lab|Sora City Lab]] is not [[sora|Sora]]; Sora again."),
        # Not inside a word, nor inside a link that is already there.
        ("Minato and [[mina|Mina]] met Mina_x and Mina.", "Minato and [[mina|Mina]] met Mina_x and [[mina|Mina]]."),
        ("Nobody known.", "Nobody known."),
    ],
)
def test_link_names_links_the_first_mention_of_each_name(statement: str, expected: str) -> None:
    names = {"Sora City Lab": "sora-city-lab", "Sora": "sora", "Mina": "mina"}
    assert link_names(statement, names) == expected
