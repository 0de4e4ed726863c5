"""The package as people get it: its sdist runs the tests, its license and changelog match."""
import configparser
import os
import pathlib
import re
import subprocess
import sys

import pytest

import tapegrad

ROOT = pathlib.Path(__file__).resolve().parent.parent
FROM_SDIST = "TAPEGRAD_TESTS_FROM_SDIST"  # tools/check_sdist.py sets it in the suite it runs
# Quick tests that read files beyond the package (README, .ci/run, docs/rules.md, the rule
# tables): an sdist without them fails here. The check that every tracked file is in the sdist
# covers the rest; CI runs the quick subset from the sdist too (tools/check_sdist.py --quick).
# (-n 0: in one process, not setup.cfg's worker per core, each importing tapegrad and collecting
# again for a few dozen tests)
SDIST_SUBSET = ["-n", "0", "tests/test_readme.py", "tests/rules/test_coverage.py", "tests/test_layout.py"]


@pytest.mark.skipif(bool(os.environ.get(FROM_SDIST)), reason="already running from an unpacked sdist")
def test_tests_run_from_the_unpacked_sdist():
    """The sdist holds every tracked file, and the tests that read files beyond the package pass from it."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "check_sdist.py"), *SDIST_SUBSET],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^tapegrad-.*\.tar\.gz: \d+ files; running the tests from ", done.stdout, flags=re.M)
    assert re.search(r"\d+ passed", done.stdout)


def test_changelog_has_a_released_section_for_the_version():
    """CHANGELOG.md opens with Unreleased, then a dated section for tapegrad.__version__."""
    headings = re.findall(r"^## \[([^\]]+)\](.*)$", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    assert headings[0][0] == "Unreleased"
    assert headings[1][0] == tapegrad.__version__
    assert re.fullmatch(r" - \d{4}-\d\d-\d\d", headings[1][1])


def test_license_file_is_the_mit_license_the_metadata_names():
    """setup.cfg says MIT and LICENSE holds the MIT license text."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["metadata"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text
