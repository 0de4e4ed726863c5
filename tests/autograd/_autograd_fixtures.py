"""The rule tables as they were before each test of the autograd layer, restored after it: the
primitives these tests declare (defvjp, notrace_primitive) leave nothing in the registry that
tests/rules/test_coverage.py would count or docs/rules.md would list. (Not a conftest.py: the
test modules of tests/ find the top conftest by name.)"""
import pytest

from tapegrad.registry import declarations_undone


@pytest.fixture(autouse=True)
def restore_rule_tables():
    with declarations_undone():
        yield
