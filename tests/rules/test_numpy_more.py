"""More of numpy on traced values: the polynomial helpers (traced through), the rules of ldexp,
frexp, modf and nextafter, np.i0 and the Hermitian FFTs (traced through): numpy's values, and
derivatives that match central differences to second order in both modes."""
import numpy as np
import pytest
import scipy.special

from _rule_tables import assert_traced_value_is_numpys, label
from tapegrad import ZERO, NoRuleError, check_grad, gradient, hessian, jvp, trace
from tapegrad.errors import ConcreteValueError

X = np.array([0.3, -0.7, 0.9, 2.2])
P = np.array([1.0, -0.6, -1.3, 0.5])  # three distinct real roots
M = np.array([[2.0, 0.3, 0.1], [0.2, 1.0, 0.4], [0.0, 0.5, 3.0]])
C = np.array([1.0 + 0.5j, 0.3 - 0.2j, 0.7 + 0.1j])
E = np.array([1, -2, 3, 0])
S = np.array([0.3, 0.5, 0.9, 0.2])
T = np.array([0.95, 0.1, 0.7])


def twice(a):
    """a with two of its values repeated."""
    return np.concatenate([a, a[1:3]])


def parts(f):
    """A complex result as its real and imaginary parts added (a real function to check)."""
    return lambda *a: np.real(f(*a)) + np.imag(f(*a))


#: (label, f, args): through a traced-through function
TABLE = [
    ("polyadd", lambda a, b: np.polyadd(a, b), (X, X[:2])),
    ("polyadd shorter first", lambda a, b: np.polyadd(b, a), (X, X[:2])),
    ("polysub", lambda a, b: np.polysub(a, b), (X[:2], X)),
    ("polymul", lambda a, b: np.polymul(a, b), (X, X[:3])),
    ("polyder", lambda a: np.polyder(a), (X,)),
    ("polyder m=2", lambda a: np.polyder(a, 2), (X,)),
    ("polyint", lambda a: np.polyint(a), (X,)),
    ("polyint m=2 k", lambda a, k: np.polyint(a, 2, k=k), (X, X[:2])),
    ("polydiv quotient", lambda a, b: np.polydiv(a, b)[0], (X, X[1:3])),
    ("polydiv remainder", lambda a, b: np.polydiv(a, b)[1], (X, X[1:3])),
    ("roots", lambda a: np.real(np.roots(a)), (P,)),
    ("roots trailing zero", lambda a: np.real(np.roots(np.concatenate([a, np.zeros(1)]))), (P,)),
    ("roots complex pair", parts(lambda a: np.roots(a)), (np.array([1.0, 0.4, 2.0]),)),
    ("poly", lambda a: np.poly(a), (X,)),
    ("poly of a matrix", lambda a: np.poly(a), (M,)),
    ("i0", lambda x: np.i0(x * 5), (np.append(X, 0.0),)),
    ("i0 of a number", lambda x: np.i0(x), (1.3,)),
    ("fft.hfft", parts(lambda a: np.fft.hfft(a)), (C,)),
    ("fft.hfft n ortho", lambda a: np.fft.hfft(a, 5, norm="ortho"), (C,)),
    ("fft.hfft of reals", lambda a: np.fft.hfft(a), (X,)),
    ("fft.ihfft", parts(lambda a: np.fft.ihfft(a)), (X,)),
    ("fft.ihfft n forward", parts(lambda a: np.fft.ihfft(a, 6, norm="forward")), (X,)),
    # set functions: repeated values are made inside f, so that central differences keep them equal
    ("unique_values", lambda a: np.unique_values(twice(a)), (S,)),
    ("unique_counts", lambda a: np.unique_counts(twice(a)).values * np.unique_counts(twice(a)).counts, (S,)),
    ("unique_inverse", lambda a: np.unique_inverse(twice(a)).values[np.unique_inverse(twice(a)).inverse_indices], (S,)),
    ("unique_all", lambda a: np.unique_all(twice(a)).values ** 2, (S,)),
    ("union1d", lambda a, b: np.union1d(a, b), (S, T)),
    ("union1d shared value", lambda a, b: np.union1d(twice(a), np.concatenate([b, a[:1]])), (S, T)),
    ("setdiff1d", lambda a, b: np.setdiff1d(twice(a), np.concatenate([b, a[:1]])), (S, T)),
    ("setdiff1d assume_unique", lambda a, b: np.setdiff1d(a, b, True), (T, S[:3])),
]

#: (rule's function, f, args): the rules of float_parts
ORDER2 = [
    (np.ldexp, lambda x: np.ldexp(x, E), (X,)),
    (np.ldexp, lambda x: np.ldexp(x, 2), (X,)),
    (np.frexp, lambda x: np.frexp(x)[0] * np.frexp(x)[1], (X,)),
    (np.modf, lambda x: np.modf(x * 3)[0] * 2 + np.modf(x * 3)[1], (X,)),
    (np.nextafter, lambda x, y: np.nextafter(x, y), (X, X[::-1])),
]
EXERCISED = {fn for fn, _, _ in ORDER2}



@pytest.mark.parametrize("label, f, args", TABLE, ids=label)
def test_traced_through_gradient(label, f, args):
    """The function's derivatives match central differences to second order, in both modes."""
    check_grad(f, *args, order=2)


@pytest.mark.parametrize("label, f, args", TABLE, ids=label)
def test_traced_through_value_is_numpys(label, f, args):
    """Traced, the function gives numpy's own value, shape and dtype."""
    assert_traced_value_is_numpys(f, args, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_float_parts_rule(fn, f, args):
    """ldexp, frexp, modf and nextafter: first derivatives against central differences, float32 too."""
    check_grad(f, *[np.asarray(a, np.float32) for a in args])


def test_float_parts_closed_forms():
    """d ldexp(x, e)/dx = 2ᵉ; d frexp(x)[0]/dx = 2⁻ᵉ; modf's fractional part 1; nextafter's 1 in x."""
    assert gradient(lambda x: np.sum(np.ldexp(x, E)), X)[0].tolist() == [2.0, 0.25, 8.0, 1.0]
    assert gradient(lambda x: np.sum(np.frexp(x)[0]), X)[0].tolist() == [2.0, 1.0, 1.0, 0.25]
    assert gradient(lambda x: np.sum(np.modf(x)[0] + np.modf(x)[1]), X)[0].tolist() == [1.0] * 4
    dx, dy = gradient(lambda x, y: np.sum(np.nextafter(x, y)), X, X[::-1])
    assert dx.tolist() == [1.0] * 4 and dy is ZERO


def test_i0_derivative_is_i1():
    """d/dx i0 = I₁ (scipy's, to rounding), and i0''(0) = 1/2, where numpy's series of |x| alone would give 0."""
    x = np.array([0.5, 3.0, 9.0])
    np.testing.assert_allclose(gradient(lambda x: np.sum(np.i0(x)), x)[0], scipy.special.i1(x), rtol=1e-13)
    assert hessian(lambda x: np.i0(x), 0.0) == 0.5


def test_roots_tape_holds_eigvals_of_the_companion_matrix():
    """np.roots is recorded as numpy computes it: the eigenvalues of the companion matrix."""
    _, tape = trace(lambda p: np.roots(p), P)
    assert np.linalg.eigvals in [getattr(op, "fn", None) for op in tape.ops]


def test_intersect1d_is_refused_naming_the_gather():
    """A value of np.intersect1d is in both arguments: no derivative, so the error names a[np.isin(a, b)]."""
    with pytest.raises(NoRuleError, match=r"numpy.intersect1d\(float64\[4\], float64\[3\]\) at .*a\[np.isin\(a, b\)\]"):
        gradient(lambda a: np.sum(np.intersect1d(a, T)), S)


def test_union1d_gives_a_shared_value_to_its_first_occurrence():
    """union1d is unique(concatenate(a, b)): a value in both gets its cotangent in a (np.unique's convention)."""
    da, db = gradient(lambda a, b: np.sum(np.union1d(a, b) * np.arange(1.0, 6.0)), S, np.array([0.9, 0.1]))
    assert da.tolist() == [3.0, 4.0, 5.0, 2.0] and db.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("f, fix", [
    (lambda x: np.sum(np.vectorize(lambda t: t * t)(x)), r"np\.vectorize calls its function on one element .*np\.apply_along_axis"),
    (lambda x: np.polynomial.Polynomial(x)(0.5), r"numpy\.polynomial\.Polynomial converts its coefficients .*np\.polyval\(c\[::-1\], t\)"),
    (lambda x: np.polynomial.chebyshev.chebval(0.5, x), r"numpy\.polynomial\.chebyshev\.chebval converts .*Clenshaw's"),
], ids=["vectorize", "Polynomial", "chebval"])
def test_functions_that_cannot_see_traced_values_name_the_fix(f, fix):
    """np.vectorize and numpy.polynomial convert traced values themselves: the error names them and the fix, in both modes."""
    with pytest.raises(ConcreteValueError, match=fix):
        gradient(f, S[:2])
    with pytest.raises(ConcreteValueError, match=fix):
        jvp(f, (S[:2],), (np.ones(2),))
