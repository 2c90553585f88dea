"""Text heuristics shared by the phases and the `offline` backend: words, dates, entities, facts, summaries.

Deterministic: no model, no network. The `offline` backend is these rules; the model backends use
them to clean and check what a model returns.
"""
