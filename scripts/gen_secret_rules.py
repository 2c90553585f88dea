"""Write brain/secret_rules.json: the regex rules of detect-secrets' plugins, which brain.secrets
uses as its provider rules. Reading them from the package at run time would import requests and
its TLS stack (~120 ms) in every process that reads a turn; the file holds the same patterns.

    .venv/bin/python scripts/gen_secret_rules.py

tests/brain/test_secret_rules.py fails when the installed detect-secrets (the `test` extra) gives
other rules than the file: run this again, then give each new plugin a gate in brain/secrets.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "brain" / "secret_rules.json"
#: Not secrets (public IPv4 addresses), or a shape that matches capitalised words in prose (Artifactory's `AP…`).
SKIPPED = ("IPPublicDetector", "ArtifactoryDetector")
_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE


def rules() -> dict:
    """The file's content, from the installed detect-secrets."""
    from detect_secrets.__version__ import VERSION
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    out = []
    for secret_type, plugin in sorted(get_mapping_from_secret_type_to_class().items()):
        if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in SKIPPED:
            out.append({
                "plugin": plugin.__name__,
                "kind": re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-"),
                "patterns": [[p.pattern, p.flags & _FLAGS] for p in plugin.denylist],
            })
    return {"source": f"detect-secrets {VERSION}", "skipped": list(SKIPPED), "rules": out}


def main() -> None:
    OUT.write_text(json.dumps(rules(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(OUT.parent.parent)}")


if __name__ == "__main__":
    main()
