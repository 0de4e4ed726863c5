"""Write docs/rules.md from the rule registry (run after adding or changing a rule)."""
import pathlib

import tapegrad  # noqa: F401  (registers the rules)
from tapegrad.show.listing import rules_markdown

if __name__ == "__main__":
    path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "rules.md"
    path.write_text(rules_markdown())
    print(f"wrote {path}")
