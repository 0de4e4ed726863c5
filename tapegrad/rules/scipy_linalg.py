"""Rules: scipy_linalg (being written)."""
