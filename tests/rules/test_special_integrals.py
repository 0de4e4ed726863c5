"""Rules of scipy.special's error-function relatives (erfi, dawsn, wofz, voigt_profile,
owens_t), exponential integrals (expi, exp1, expn, spence) and elliptic integrals (ellipk,
ellipkm1, ellipe, ellipkinc, ellipeinc, agm)."""
import math

import numpy as np
import pytest
import scipy.special as sp

import tapegrad
from tapegrad import NO_TANGENT, NoRuleError, gradient, rrule
from tapegrad.rules.special_elliptic import ellipe_slope, ellipk_slope
from tapegrad.tangents import getitem

from _complex import complex_table_tests
from _special_rows import CASES, check_row, exercised, order2_rows, row

N = np.array([0, 1, 3])

TABLE = [
    row(sp.erfi, [(-1.5, 1.5)]), row(sp.dawsn, [(-3, 3)]),
    row(sp.wofz, [(-2, 2)], lambda x: np.real(sp.wofz(x)) + 2 * np.imag(sp.wofz(x)), label="real x"),
    row(sp.wofz, [(-2, 2), (-1, 2)], lambda x, y: np.real(sp.wofz(x + 1j * y)) - 3 * np.imag(sp.wofz(x + 1j * y)),
        label="complex z"),
    row(sp.voigt_profile, [(-2, 2), (0.5, 1.5), (0.3, 1.5)]), row(sp.owens_t, [(-2, 2), (-2, 2)]),
    row(sp.expi, [(0.3, 3)]), row(sp.expi, [(-3, -0.3)], label="negative"), row(sp.exp1, [(0.3, 3)]),
    row(sp.expn, [(0.3, 3)], lambda x: sp.expn(2, x)), row(sp.expn, [(0.3, 3)], lambda x: sp.expn(N, x), "orders 0 1 3"),
    row(sp.spence, [(0.2, 3)]),
    row(sp.ellipk, [(-2, 0.9)]), row(sp.ellipk, [(-0.09, 0.09)], label="series"), row(sp.ellipkm1, [(0.01, 1.5)]),
    row(sp.ellipe, [(-2, 0.9)]), row(sp.ellipe, [(-0.09, 0.09)], label="series"),
    row(sp.ellipkinc, [(-1.5, 1.5), (-1, 0.9)]), row(sp.ellipeinc, [(-1.5, 1.5), (-1, 0.9)]),
    row(sp.agm, [(0.5, 3), (0.5, 3)]), row(sp.agm, [(1, 1.1), (1, 1.1)], label="near a = b"),
]

EXERCISED = exercised(TABLE)
#: (rule's function, function differentiated, float64 arguments): run by tests/conformance
ORDER2 = order2_rows(TABLE, 12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fn, f, domains", TABLE)
def test_rule(fn, f, domains, case, rng):
    """Each rule matches central differences in both modes: at Python floats (float gradients),
    on arrays broadcast against each other, and in float32."""
    check_row(f, domains, case, rng)


#: (fn, args, kwargs, wrt): wofz is entire
COMPLEX_TABLE = [(sp.wofz, (np.array([0.5 + 1j, -1.2 + 0.3j, 2.0 - 0.5j]),), {}, None),
                 (sp.wofz, (np.array([0.5, -1.5]),), {}, None)]
test_complex_rule_pullback, test_complex_rule_jvp = complex_table_tests(COMPLEX_TABLE)


def test_wofz_slope_is_its_closed_form():
    """w′(z) = -2z·w(z) + 2i/√π at a complex z (the holomorphic derivative, seed 1)."""
    z = 0.7 + 0.4j
    _, back = rrule(sp.wofz, z)
    assert getitem(back(1.0), 1) == pytest.approx(-2 * z * sp.wofz(z) + 2j / np.sqrt(np.pi), rel=1e-14)


def test_closed_forms():
    """Owen's T in h and a; E₀′ and E₂′; Ei′ = eˣ/x; spence′ = log z/(1 - z), -1 at z = 1."""
    dh, da = gradient(sp.owens_t, 0.8, 1.5)
    assert dh == pytest.approx(-np.exp(-0.32) / (2 * np.sqrt(2 * np.pi)) * math.erf(0.8 * 1.5 / np.sqrt(2)), rel=1e-14)
    assert da == pytest.approx(np.exp(-0.32 * 3.25) / (2 * np.pi * 3.25), rel=1e-14)
    assert gradient(lambda x: sp.expn(0, x), 2.0)[0] == pytest.approx(-np.exp(-2.0) * 3 / 4, rel=1e-14)
    assert gradient(lambda x: sp.expn(2, x), 2.0)[0] == pytest.approx(-sp.exp1(2.0), rel=1e-14)
    assert gradient(sp.expi, 1.5)[0] == pytest.approx(np.exp(1.5) / 1.5, rel=1e-14)
    assert gradient(sp.spence, 1.0) == (-1.0,)
    assert gradient(sp.spence, 2.5)[0] == pytest.approx(np.log(2.5) / -1.5, rel=1e-14)


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-fwd"])
def test_incomplete_elliptic_second_derivatives_near_m_zero(mode):
    """∂²F/∂m² and ∂²E/∂m² of the incomplete integrals near m = 0, in both modes: at 0 they are
    (3/4) S₄ and -(1/4) S₄ (S₄ = ∫₀^φ sin⁴ t dt), and smooth across m = ±1e-2 where the series
    hands over to the closed forms (which divide by m: 64 at 1e-9, where it is 0.036; 0 at 0);
    the mixed ∂²/∂φ∂m at 0 is ±sin²φ/2."""
    phi = 0.8
    s2 = (phi - np.sin(phi) * np.cos(phi)) / 2
    s4 = (3 * s2 - np.sin(phi) ** 3 * np.cos(phi)) / 4
    for fn, at_zero in ((sp.ellipkinc, 0.75 * s4), (sp.ellipeinc, -0.25 * s4)):
        second = lambda m: tapegrad.hessian(lambda t: fn(phi, t), m, mode=mode)  # noqa: E731
        assert second(0.0) == pytest.approx(at_zero, rel=1e-13)
        assert second(1e-9) == pytest.approx(at_zero, rel=1e-7)
        assert second(0.0099) == pytest.approx(second(0.0101), rel=2e-3)  # (continuous at the seam)
        H = tapegrad.hessian(lambda v: fn(v[0], v[1]), np.array([phi, 0.0]), mode=mode)
        assert H[0, 1] == pytest.approx(np.sign(at_zero) * np.sin(phi) ** 2 / 2, rel=1e-13)


@pytest.mark.parametrize("mode", ["rev-rev", "fwd-fwd"])
def test_spence_second_derivative_near_and_at_one(mode):
    """spence'' = 1/2 + 2(z - 1)/3 + ... near z = 1, in both modes (log z/(1 - z) cancels there:
    its second derivative came out 0 at 1 and lost digits near it); it joins the quotient past
    |z - 1| = 1e-2."""
    for z in (1.0, 1 + 1e-9, 1 - 1e-6, 1.0099):
        u = z - 1
        want = sum((-1) ** k * (k + 1) / (k + 2) * u ** k for k in range(9))  # 1/2 - 2u/3 + 3u²/4 - ...
        assert tapegrad.hessian(sp.spence, z, mode=mode) == pytest.approx(want, rel=1e-9)
    z = 1.0101
    assert tapegrad.hessian(sp.spence, z, mode=mode) == pytest.approx((1 - z + z * np.log(z)) / (z * (1 - z) ** 2), rel=1e-10)


def test_expn_order_gets_no_tangent():
    """The order of expn is an integer: its tangent is NoTangent."""
    _, back = rrule(sp.expn, 2, 1.0)
    assert back(1.0)[1] is NO_TANGENT


def test_voigt_profile_slopes_sum_to_its_scaling():
    """V(x, σ, γ) is homogeneous of degree -1: x∂x + σ∂σ + γ∂γ = -V (Euler)."""
    x, s, g = 0.7, 1.2, 0.4
    dx, ds, dg = gradient(sp.voigt_profile, x, s, g)
    assert x * dx + s * ds + g * dg == pytest.approx(-sp.voigt_profile(x, s, g), rel=1e-13)


@pytest.mark.parametrize("m", [0.0, 1e-9, -0.0999, 0.0999, 0.1001, -0.1001])
def test_complete_elliptic_slopes_across_the_series(m):
    """K′ and E′ from the series (|m| < 0.1) and from the closed forms meet: at 0 they are ±π/8,
    and on both sides of |m| = 0.1 they agree with the closed forms (which lose about a digit there)."""
    if m == 0:
        assert gradient(sp.ellipk, m) == (np.pi / 8,) and gradient(sp.ellipe, m) == (-np.pi / 8,)
        return
    k, e = sp.ellipk(m), sp.ellipe(m)
    closed_k, closed_e = (e - (1 - m) * k) / (2 * m * (1 - m)), (e - k) / (2 * m)
    tol = 1e-14 if abs(m) > 0.05 else 1e-6  # (the closed forms cancel near 0: at 1e-9 only 6 digits are left)
    assert gradient(sp.ellipk, m)[0] == pytest.approx(closed_k, rel=tol)
    assert gradient(sp.ellipe, m)[0] == pytest.approx(closed_e, rel=tol)
    assert ellipk_slope(np.array(m)) == gradient(sp.ellipk, m)[0] and ellipe_slope(np.array(m)) == gradient(sp.ellipe, m)[0]


@pytest.mark.parametrize("p", [1e-12, 1e-3, 0.5, 0.95])
def test_ellipkm1_slope_near_m_one(p):
    """d/dp K(1 - p) = -(E(1-p) - pK)/(2p(1-p)), finite digits for tiny p (where K has its log singularity)."""
    want = -(sp.ellipe(1 - p) - p * sp.ellipkm1(p)) / (2 * p * (1 - p)) if p < 0.9 else -ellipk_slope(np.array(1 - p))
    assert gradient(sp.ellipkm1, p)[0] == pytest.approx(want, rel=1e-13)


def test_incomplete_elliptic_at_m_zero():
    """At m = 0, F(φ|m) and E(φ|m) have slopes ±(2φ - sin 2φ)/8 in m, and 1 in φ."""
    phi = 0.9
    assert gradient(sp.ellipkinc, phi, 0.0) == (1.0, pytest.approx((2 * phi - np.sin(2 * phi)) / 8, rel=1e-15))
    assert gradient(sp.ellipeinc, phi, 0.0) == (1.0, pytest.approx(-(2 * phi - np.sin(2 * phi)) / 8, rel=1e-15))


def test_agm_is_homogeneous_and_symmetric():
    """M(a, b) = M(b, a) and M(ta, tb) = tM: a∂a + b∂b = M, and ∂a M(a, b) = ∂b M(b, a); both 1/2 at a = b."""
    da, db = gradient(sp.agm, 1.3, 2.9)
    assert 1.3 * da + 2.9 * db == pytest.approx(sp.agm(1.3, 2.9), rel=1e-14)
    assert gradient(sp.agm, 2.9, 1.3) == (pytest.approx(db, rel=1e-13), pytest.approx(da, rel=1e-13))
    assert gradient(sp.agm, 2.0, 2.0) == (0.5, 0.5)


def test_zetac_has_no_rule():
    """ζ′ has no function in scipy: zetac has no rule, and a gradient through it says so."""
    with pytest.raises(NoRuleError, match=r"no rrule for scipy\.special\.zetac"):
        gradient(sp.zetac, 3.0)
