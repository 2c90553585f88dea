"""Brain: memory for AI agents as a git repository of plain markdown."""

__version__ = "0.1.0"
