"""Rules: special (being written)."""
