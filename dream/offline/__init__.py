"""Deterministic heuristics behind the `offline` backend: no model, no network."""
