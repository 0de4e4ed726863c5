"""Showing tapes to people: text dumps, explanations, pictures, the rule listing, the command line."""
