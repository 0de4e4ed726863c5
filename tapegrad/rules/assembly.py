"""Rules: assembly (being written)."""
