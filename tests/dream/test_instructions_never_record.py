"""'Never record' bullets block their topic, and nothing but their topic."""

from __future__ import annotations

from brain.scaffold import initial_files
from dream.instructions import parse_instructions

TEMPLATE = initial_files()[".dream/instructions.md"]


def test_the_init_template_blocks_health_but_not_ordinary_sentences():
    rules = parse_instructions(TEMPLATE)
    assert rules.blocks("I have a migraine today, so keep it short.")
    assert rules.blocks("My doctor changed the medication.")
    for sentence in (
        "Yesterday I took the kids to the museum.",
        "The owner of the cafe is Kenji.",
        "I work at the Open Access Institute.",
        "She sent the email about the venue.",
    ):
        assert not rules.blocks(sentence), sentence


def test_no_stopword_or_generic_word_becomes_a_trigger():
    rules = parse_instructions("## Never record\n- Health details, the owner's or anyone else's.\n- Her sister's private matters.\n")
    assert not {"the", "owner", "her", "anyone", "else", "private", "matter", "detail"} & set(rules.never_record)
    assert "sister" in rules.never_record and "migraine" in rules.never_record
