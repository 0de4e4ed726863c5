"""Coverage of the rule registry: every rule is driven by a test table, and the listing is current."""
import pathlib

import tapegrad
from tapegrad.show.listing import rules_markdown
from tapegrad.registry import RULES

from _tables import exercised as _exercised

TESTS = pathlib.Path(__file__).resolve().parent.parent


def test_every_registered_rule_is_exercised():
    """A rule registered by tapegrad but driven by no test table fails here (coverage cannot shrink)."""
    exercised = _exercised()
    ours = [fn for fn, rule in RULES.items() if rule.__module__.startswith("tapegrad")]
    missing = sorted(tapegrad.errors.qualified_name(fn) for fn in ours if fn not in exercised)
    assert missing == []


def test_rules_listing_is_in_sync():
    """docs/rules.md is what the registry generates (run tools/make_rules_doc.py after a change)."""
    listed = (TESTS.parent / "docs" / "rules.md").read_text()
    assert listed == rules_markdown()
