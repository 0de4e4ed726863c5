"""What the tables of scipy.special's rules added by family share (test_special_elementary.py,
test_special_integrals.py, test_special_bessel_extra.py, test_special_distributions.py): a row
is a rule's function, the function differentiated (the rule's own, or a lambda holding its
integer or refused parameters constant) and one interval per differentiated argument, where
the function is smooth."""
import numpy as np
import pytest

from tapegrad import check_grad

from _rule_tables import sample

#: how the points of a row are drawn: Python floats; arrays broadcast against each other (the
#: first of shape (2, 3), the others (3,)); float32 arrays
CASES = ["scalars", "broadcast", "float32"]


def row(fn, domains, f=None, label=""):
    """One table row: `fn`'s rule, driven through `f` (`fn` by default)."""
    return pytest.param(fn, f or fn, domains, id=f"{fn.__name__} {label}".strip())


def points(rng, domains, case):
    """The arguments of a row for one of `CASES`."""
    if case == "scalars":
        return [float(sample(rng, d, ())) for d in domains]
    if case in ("float32", "vector"):
        return [sample(rng, d, (3,), np.float32 if case == "float32" else np.float64) for d in domains]
    return [sample(rng, d, (2, 3) if i == 0 else (3,)) for i, d in enumerate(domains)]


def check_row(f, domains, case, rng):
    """The row's gradient matches central differences in both modes."""
    check_grad(f, *points(rng, domains, case))


def order2_rows(table, seed):
    """One ORDER2 row per table row, small (every entry point of the conformance layer runs it,
    hessians included): the first argument a float64 array of shape (3,), the others floats."""
    rng = np.random.default_rng(seed)
    return [(p.values[0], p.values[1], tuple(sample(rng, d, (3,)) if i == 0 else float(sample(rng, d, ()))
                                             for i, d in enumerate(p.values[2])))
            for p in table]


def exercised(table):
    return {p.values[0] for p in table}
