"""Rules: linalg (being written)."""
