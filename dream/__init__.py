"""Dream: the nightly compiler from raw sessions to a Brain."""
