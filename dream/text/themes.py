"""Life themes for a person's page: the offline backend groups what it knows of someone by theme.

"What activities does Melanie do?" or "What pets does Ana have?" ask about a theme, not a date:
a person page that lists facts under "Hobbies and activities" or "Pets" answers them from one
section, each fact with its citation. A fact belongs to the first theme one of whose words it
contains (stemmed, so "painted" counts for "paint"); a fact with none stays under About or
Timeline. The word lists are general (everyday life), not tuned to any data set.
"""

from __future__ import annotations

from dream.text.words import content_key, content_words

#: (heading, words), in the order a fact is tested and the sections are printed.
THEMES: tuple[tuple[str, str], ...] = (
    ("Hobbies and activities", """hobby hobbies activity activities painting paint painted pottery ceramics drawing draw sketch
        camping camp hiking hike swimming swim running run jogging marathon yoga meditation dance dancing ballet cooking
        cook baking bake gardening garden reading guitar piano violin clarinet drums flute instrument
        singing sing choir cycling bike biking fishing climbing skiing surfing skating knitting sewing crafts craft chess
        gaming soccer football basketball volleyball tennis golf gym workout sport sports karate volunteering volunteer
        poetry museum concert festival"""),
    ("Family", """family fam kid kids son sons daughter daughters husband wife spouse mom mother dad father parent parents
        brother sister sibling siblings grandma grandmother grandpa grandfather grandparents children child baby married
        marriage wedding cousin aunt uncle niece nephew adopt adoption"""),
    ("Pets", "pet pets dog dogs puppy cat cats kitten horse bird parrot fish hamster rabbit bunny turtle"),
    ("Work and studies", """job jobs work career business company office boss colleague coworker manager employer studio
        store shop client clients customer startup school university college degree course study studying exam teacher
        student intern internship promotion hired salary profession certification mentor mentorship workshop conference"""),
    ("Books, music and films", "book books novel author read song songs band album music movie movies film films show series podcast"),
    ("Places and travel", """trip trips travel traveled travelled traveling visit visited vacation holiday beach mountain
        mountains lake city country abroad flight roadtrip moved move hometown"""),
    ("Health", "health doctor hospital sick illness injury injured surgery therapy therapist diet sleep anxiety stress allergy"),
    ("Beliefs and community", """community church faith religion religious belief beliefs values cause activism activist
        rights pride lgbtq charity support group identity"""),
)


_STEMS = tuple((heading, frozenset(content_words(words))) for heading, words in THEMES)


def theme_of(statement: str) -> str | None:
    """The first theme whose words the statement contains, else None."""
    found = set(content_key(statement).split())
    for heading, stems in _STEMS:
        if found & stems:
            return heading
    return None
