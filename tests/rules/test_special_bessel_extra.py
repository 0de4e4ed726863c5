"""Rules of the Bessel functions of scipy.special beyond tests/rules/test_special_extra.py's: K
of fixed and integer order (k0, k0e, k1, k1e, kn), the scaled jve, yve, kve, and the Hankel
functions hankel1, hankel2, hankel1e, hankel2e (complex values)."""
import numpy as np
import pytest
import scipy.special as sp

from tapegrad import NO_TANGENT, NoRuleError, gradient, rrule
from tapegrad.tangents import getitem

from _complex import complex_table_tests
from _special_rows import CASES, check_row, exercised, order2_rows, row

N = np.array([0, 1, 3])
HANKEL = [sp.hankel1, sp.hankel2, sp.hankel1e, sp.hankel2e]


def _real(fn):
    """A real function of `fn`'s complex value, both parts weighed differently."""
    def f(*args):
        z = fn(*args)
        return np.real(z) + 2 * np.imag(z)
    return f


TABLE = [
    row(sp.k0, [(0.3, 3)]), row(sp.k0e, [(0.3, 3)]), row(sp.k1, [(0.3, 3)]), row(sp.k1e, [(0.3, 3)]),
    row(sp.kn, [(0.3, 3)], lambda x: sp.kn(2, x)), row(sp.kn, [(0.3, 3)], lambda x: sp.kn(N, x), "orders 0 1 3"),
    row(sp.jve, [(0.5, 4)], lambda x: sp.jve(1.5, x), "in x"), row(sp.yve, [(0.5, 4)], lambda x: sp.yve(2.5, x), "in x"),
    row(sp.kve, [(0.3, 3)], lambda x: sp.kve(1.5, x), "in x"),
] + [row(fn, [(0.5, 4)], _real(lambda x, fn=fn: fn(1.5, x)), "in x") for fn in HANKEL]

#: the order v too (by quadrature, first order only): not in ORDER2
IN_ORDER = [row(fn, [(0.2, 3), (0.5, 4)], _real(fn) if fn in HANKEL else fn, "v and x")
            for fn in [sp.jve, sp.yve, sp.kve] + HANKEL]

EXERCISED = exercised(TABLE)
#: (rule's function, function differentiated, float64 arguments): run by tests/conformance
ORDER2 = order2_rows(TABLE, 13)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fn, f, domains", TABLE)
def test_rule(fn, f, domains, case, rng):
    """Each rule matches central differences in both modes: at Python floats (float gradients),
    on arrays, and in float32."""
    check_row(f, domains, case, rng)


@pytest.mark.parametrize("fn, f, domains", IN_ORDER)
def test_rule_in_order_and_x(fn, f, domains, rng):
    """The real order v of the scaled and Hankel functions is differentiated (by quadrature)
    together with x, broadcast against it."""
    check_row(f, domains, "broadcast", rng)


#: (fn, args, kwargs, wrt): the Hankel functions, holomorphic in x, at real and complex x
COMPLEX_TABLE = ([(fn, (1.5, np.array([0.7, 2.5])), {}, [1]) for fn in HANKEL]
                 + [(fn, (0.5, np.array([1.2 + 0.3j, 2.0 - 0.4j])), {}, [1]) for fn in HANKEL])
test_complex_rule_pullback, test_complex_rule_jvp = complex_table_tests(COMPLEX_TABLE)


def test_closed_forms():
    """K₀′ = -K₁, K₁′ = -K₀ - K₁/x, (eˣK₀)′ = eˣ(K₀ - K₁), H⁽¹⁾₀′ = -H⁽¹⁾₁, and ∂kve/∂v = 0 at v = 0 (K₋ᵥ = Kᵥ)."""
    x = 1.7
    assert gradient(sp.k0, x)[0] == pytest.approx(-sp.k1(x), rel=1e-14)
    assert gradient(sp.k1, x)[0] == pytest.approx(-sp.k0(x) - sp.k1(x) / x, rel=1e-14)
    assert gradient(sp.k0e, x)[0] == pytest.approx(np.exp(x) * (sp.k0(x) - sp.k1(x)), rel=1e-13)
    _, back = rrule(sp.hankel1, 0.0, 1.0 + 0.5j)
    assert getitem(back(1.0), 2) == pytest.approx(-sp.hankel1(1.0, 1.0 + 0.5j), rel=1e-13)
    assert abs(gradient(lambda v: sp.kve(v, 2.0), 0.0)[0]) < 1e-14


def test_kn_order_gets_no_tangent():
    """The order of kn is an integer: its tangent is NoTangent."""
    _, back = rrule(sp.kn, 2, 1.0)
    assert back(1.0)[1] is NO_TANGENT


@pytest.mark.filterwarnings("ignore:floating point number truncated")
@pytest.mark.parametrize("fn", [sp.yn, sp.kn, sp.expn], ids=lambda f: f.__name__)
def test_integer_order_functions_take_a_float_order_as_scipy_does(fn):
    """scipy truncates a float order (with a warning): yn(1.7, x) is yn(1, x), and so is its
    slope. It was taken with the order as given: kn(0.5, x)'s as -(kn(-0.5, x) + kn(1.5, x))/2,
    which scipy reads as -(K₀ + K₁)/2, where K₀' = -K₁."""
    for order in (1.7, 0.5):
        assert gradient(lambda x: fn(order, x), 0.8)[0] == gradient(lambda x: fn(int(order), x), 0.8)[0]


def test_order_derivative_second_order_is_refused():
    """The order's quadrature has no rule of its own: a second derivative in v raises, naming it."""
    with pytest.raises(NoRuleError, match=r"kve_dv"):
        gradient(lambda v: gradient(lambda v: sp.kve(v, 2.0), v)[0], 1.5)
