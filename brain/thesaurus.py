"""Kinds of things and their everyday members, for widening a query that names a kind.

"What activities does Melanie do?" names a kind; the turns that answer it name members ("I signed
up for a pottery class", "we went camping"). Search adds the members of every kind a query names
as a second, lighter lexical query (brain.search). The lists are general everyday vocabulary, not
drawn from any data set; an owner's own words are matched by the embedding model.
"""

from __future__ import annotations

import functools

#: kind words (as a query says them) → member words (as a conversation says them).
KINDS: dict[str, str] = {
    "activity activities hobby hobbies pastime pastimes": """painting pottery drawing camping hiking swimming running
        yoga dancing cooking baking gardening photography reading guitar piano violin singing cycling fishing climbing
        skiing surfing knitting chess gaming soccer football basketball tennis golf gym volunteering class""",
    "sport sports exercise workout": """running swimming cycling yoga gym soccer football basketball tennis golf hiking
        climbing skiing surfing marathon volleyball baseball karate boxing""",
    "pet pets animal animals": "dog dogs puppy cat cats kitten horse bird parrot fish hamster rabbit turtle",
    "family relatives children kids": """kids kid son daughter husband wife mom mother dad father parents brother sister
        grandma grandmother grandpa grandfather children baby cousin""",
    "instrument instruments": "guitar piano violin cello clarinet flute drums saxophone trumpet ukulele harp",
    "music musical band bands artist artists": "concert band song songs album singer guitarist festival playlist",
    "book books reading novel novels": "book books novel read reading author library",
    "art artwork arts": "painting paintings drawing sketch sculpture pottery mural canvas gallery",
    "food meal meals dish dishes": "dinner lunch breakfast recipe cook cooking baked pizza pasta cake soup",
    "trip trips travel travels vacation places visited": "trip travel traveled visited vacation flight beach mountains roadtrip abroad",
    "job career work profession": "job career work office company business boss hired role",
    "event events": "party concert festival conference parade wedding show meeting ceremony fair",
}


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for kinds, members in KINDS.items():
        for kind in kinds.split():
            out.setdefault(kind, [])
            out[kind] += [m for m in members.split() if m not in out[kind]]
    return {k: tuple(v) for k, v in out.items()}


def members(terms: list[str]) -> list[str]:
    """Member words of the kinds among `terms` (lower-case query words), without the terms themselves."""
    index = _index()
    out: list[str] = []
    for term in terms:
        for word in index.get(term, ()):
            if word not in terms and word not in out:
                out.append(word)
    return out
