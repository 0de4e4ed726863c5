"""Every registered rule has a second-order row; the elementwise and linear-algebra rules hold
at third order; the non-differentiable functions are zero at every order.

Each test module may define ``ORDER2``: a list of ``(rule_fn, f, args)`` triples, where
`rule_fn` is the registered function whose rule is exercised, `f` the function differentiated
(`rule_fn` itself, or a lambda fixing its non-differentiable arguments) and `args` float64
numbers and arrays at a smooth point. The conformance layer (tests/conformance) runs every row
through every entry point, second order in all four combinations of modes included; a rule
that tapegrad registers and no row exercises fails `test_every_registered_rule_has_an_order2_row`.
"""
import pathlib

import numpy as np
import pytest

import tapegrad
from tapegrad import ZERO, check_grad, gradient, jvp
from tapegrad.errors import qualified_name
from tapegrad.registry import NONDIFF, RULES, declarations_undone

from _tables import modules, order2_rows

#: the families checked at order 3 too: the elementwise functions and linear algebra
ORDER3_FAMILIES = {"unary", "arithmetic", "special", "linalg", "decompositions", "scipy_linalg"}

MODULES = modules()
#: (module name, (rule's function, function differentiated, args)) of every ORDER2 row
ROWS = order2_rows()


def _family(fn):
    return RULES[fn].__module__.rsplit(".", 1)[-1]


def _params(rows):
    return [pytest.param(fn, f, args, id=f"{qualified_name(fn)}-{i}") for i, (_, (fn, f, args)) in enumerate(rows)]


def _first_of_each(rows):
    """The first row of each rule (order 3 is slow on a matrix: one row per rule)."""
    seen, out = set(), []
    for row in rows:
        if row[1][0] not in seen:
            seen.add(row[1][0])
            out.append(row)
    return out


@pytest.mark.parametrize("fn, f, args", _params(_first_of_each([r for r in ROWS if _family(r[1][0]) in ORDER3_FAMILIES])))
def test_elementwise_and_linear_algebra_rules_at_third_order(fn, f, args):
    """The elementwise and linear-algebra rules hold at order 3 too, in every combination of modes."""
    check_grad(f, *args, order=3)


#: the pullback ops of the ODE solvers (one recorded call of the checkpointed adjoint, in
#: compiled and replayed gradients and under an outer trace) -> the primal whose ORDER2 rows
#: differentiate them: the primal's reverse-over-reverse second order is their first, run
#: through the conformance layer; a row of their own would be a third derivative of an ODE
#: solve, minutes long
PULLBACK_OPS = {"tapegrad.rules.ivp.ivp_cotangent": "tapegrad.scipy._ivp.ivp_solution",
                "tapegrad.rules.integrate.odeint_cotangent": "tapegrad.scipy.integrate.odeint"}


#: rules whose value does not move with the argument they pass the derivative to, by design, so
#: that central differences cannot check them: each with the test that checks it at second order
#: in all four modes instead
NOT_BY_DIFFERENCES = {
    # jacobian's int leaves: an int that varies with its flat entry, as grad's int arguments do
    "tapegrad.forward.integer_valued": "tests/test_forward.py::test_integer_leaves_reach_f_as_integers_that_vary",
    # an integer exponent in its power's slope: a count, no derivative
    "tapegrad.rules.arithmetic.as_count": "tests/rules/test_elementwise.py::test_an_int_exponent_is_a_count_at_second_order_too",
}


def test_every_registered_rule_has_an_order2_row():
    """A rule registered by tapegrad and exercised by no ORDER2 row fails here (a solver's
    pullback op by its primal's rows: `PULLBACK_OPS`; `NOT_BY_DIFFERENCES` by its own test)."""
    covered = {qualified_name(fn) for _, (fn, _, _) in ROWS}
    ours = [fn for fn, rule in RULES.items() if rule.__module__.startswith("tapegrad")]
    assert sorted(qualified_name(fn) for fn in ours
                  if qualified_name(fn) not in covered and PULLBACK_OPS.get(qualified_name(fn)) not in covered
                  and qualified_name(fn) not in NOT_BY_DIFFERENCES) == []


def test_the_rules_central_differences_cannot_check_have_their_own_tests():
    """Each of `NOT_BY_DIFFERENCES` is a registered rule and names a test that exists."""
    names = {qualified_name(fn) for fn in RULES}
    for op, test in NOT_BY_DIFFERENCES.items():
        path, name = test.split("::")
        tests = pathlib.Path(__file__).resolve().parent.parent
        assert op in names and f"def {name}(" in (tests / path.removeprefix("tests/")).read_text(), test


@pytest.mark.parametrize("op", sorted(PULLBACK_OPS))
def test_a_solvers_pullback_op_runs_in_its_primals_second_order(op):
    """The Hessian of the primal's first ORDER2 row by reverse over reverse runs the pullback
    op's rule, and equals forward over reverse's, which does not."""
    fn, f, args = next(row for _, row in ROWS if qualified_name(row[0]) == PULLBACK_OPS[op])
    x, rest = args[0], args[1:]
    u = np.cos(np.arange(np.size(f(*args)), dtype=float)).reshape(np.shape(f(*args)))

    def phi(x):
        return np.sum(u * f(x, *rest))

    target = next(g for g in RULES if qualified_name(g) == op)
    rule, calls = RULES[target], []
    with declarations_undone():
        RULES[target] = lambda *a, **k: calls.append(a) or rule(*a, **k)
        H = tapegrad.hessian(phi, x, mode="rev-rev")
    assert len(calls) >= 1
    np.testing.assert_allclose(H, tapegrad.hessian(phi, x, mode="fwd-rev"), rtol=1e-7, atol=1e-9)


def test_order2_args_are_float64():
    """The rows differentiate float64 numbers and arrays (the tolerances are float64's)."""
    for _, (fn, _, args) in ROWS:
        for a in args:
            assert isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype == np.float64), \
                (qualified_name(fn), a)


# --- the non-differentiable table: zero at every order ---

NONDIFF_ROWS = MODULES["test_nondiff"].NONDIFF
X = np.array([[-1.62, -0.41, 0.21], [0.88, 1.33, 1.94]])
V = np.cos(np.arange(6.0)).reshape(2, 3)


def _is_zero(t):
    return t is ZERO or t is tapegrad.NO_TANGENT or not np.any(t)


def test_every_nondifferentiable_function_has_a_row():
    """Each function of numpy, scipy or tapegrad marked non-differentiable is checked at every order below."""
    covered = {fn for fn, _ in NONDIFF_ROWS}
    ours = [qualified_name(fn) for fn in NONDIFF if qualified_name(fn).split(".")[0] in ("numpy", "scipy", "tapegrad")]
    assert sorted(name for name in ours if name not in {qualified_name(fn) for fn in covered}) == []


@pytest.mark.parametrize("fn, use", [pytest.param(fn, use, id=qualified_name(fn)) for fn, use in NONDIFF_ROWS])
def test_nondifferentiable_is_zero_at_every_order(fn, use):
    """Through a piecewise-constant function alone, every derivative of orders 1 to 3 is zero,
    in both modes and every combination of them."""
    assert fn in NONDIFF

    def g(x):
        return np.sum(use(x) * V) if np.shape(use(X)) == X.shape else np.sum(use(x) * 1.0)

    def rev(x):
        dx = gradient(g, x)[0]
        return 0.0 if dx is ZERO else np.sum(dx * V)

    def fwd(x):
        return jvp(g, (x,), (V,))[1]

    for h in (g, rev, fwd):
        assert _is_zero(gradient(h, X)[0])
        assert _is_zero(jvp(h, (X,), (V,))[1])
    for h in (rev, fwd):
        check_grad(h, X, order=2)
