"""Regenerate docs/validators.md from the check registry (`--check`: fail when it is stale)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from validators.doc import main  # noqa: E402 - after the path fix, so it runs from a checkout

if __name__ == "__main__":
    sys.exit(main())
