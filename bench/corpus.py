"""A deterministic synthetic session corpus for benchmarks: people, organisations, places, preferences.

Not test data: it exists to measure speed at scale (10,000 sessions and more).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

FIRST = "Ada Ben Cleo Dev Eli Fay Gus Hana Ivo Jun Kai Lea Max Nia Omar Pia Quin Ravi Sana Tomas Uma Vik Wen Xia Yara Zeke".split()
LAST = "Abe Brandt Costa Diaz Eriksen Fujita Garcia Haddad Ito Jensen Kowalski Lindqvist Moreau Nakamura Okoye Petrov".split()
ORG_A = "Blue Cedar Delta Ember Fern Granite Harbor Iris Juniper Kestrel Lumen Maple Nimbus Orbit Pine Quartz".split()
ORG_B = "Laboratory Institute Research Coop Foundation Studio University Network".split()
PLACES = "Oslo Lisbon Kyoto Sendai Nairobi Lima Quito Perth Dakar Hanoi Bergen Porto Turin Graz Cork Leeds".split()
THINGS = "PDF figures|PNG images|plain text|dark mode|short emails|long calls|paper notes|video calls|tea|coffee".split("|")
HOBBIES = "painting hiking pottery running swimming cycling climbing baking gardening chess".split()


def _people(rnd: random.Random, n: int) -> list[str]:
    return sorted({f"{rnd.choice(FIRST)} {rnd.choice(LAST)}" for _ in range(n * 3)})[:n]


def make_corpus(root: Path, sessions: int, turns: int = 10, seed: int = 7, start: dt.date = dt.date(2024, 1, 1)) -> int:
    """Write `sessions` canonical jsonl files under root/sessions/raw; returns the number of turns."""
    rnd = random.Random(seed)
    people = _people(rnd, 300)
    orgs = sorted({f"{rnd.choice(ORG_A)} {rnd.choice(ORG_B)}" for _ in range(200)})
    raw = Path(root) / "sessions" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(sessions):
        day = start + dt.timedelta(days=i // 4)
        sid = f"{day.isoformat()}-s{i:05d}"
        when = f"{day.isoformat()}T{9 + i % 8:02d}:00:00+00:00"
        lines = [{"type": "session", "id": sid, "started": when, "source": "chat", "participants": ["Owner", "assistant"]}]
        for n in range(1, turns + 1):
            if n % 2 == 0:
                text = rnd.choice(["Noted. Anything else?", "Thanks, I will keep that in mind.", "Understood. Shall I draft something?"])
                lines.append({"type": "turn", "n": n, "role": "assistant", "speaker": "assistant", "text": text})
                continue
            p, q = rnd.sample(people, 2)
            org, place = rnd.choice(orgs), rnd.choice(PLACES)
            a, b = rnd.sample(THINGS, 2)
            text = rnd.choice([
                f"I work at {org} as a researcher. My manager at {org} is {p}.",
                f"{org} is a small team in {place}. {p} leads the work there.",
                f"Yesterday I met {p} and {q} in {place}. We talked about {rnd.choice(HOBBIES)}.",
                f"I prefer {a} over {b}. Please remember that.",
                f"My friend {p} lives in {place}. {p} loves {rnd.choice(HOBBIES)}.",
                f"Last week I visited {org} in {place} with {q}.",
                f"We decided to run the workshop in {place} on {day.strftime('%B')} {1 + i % 27}.",
            ])
            lines.append({"type": "turn", "n": n, "role": "user", "speaker": "Owner", "time": when, "text": text})
        (raw / f"{sid}.jsonl").write_text("\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n", encoding="utf-8")
        total += turns
    return total
