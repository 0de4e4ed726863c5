"""The complex checks every rule family shares, under autograd's convention (see the README).

A cotangent ``c`` of a complex value ``z`` is what makes ``df = Re Σ c·dz`` for a real ``f``:
``c = ∂f/∂Re z − i ∂f/∂Im z``, so the gradient of ``|z|²`` at ``1+2j`` is ``2−4j``. For a rule
``y = fn(*args)`` and a cotangent ``g`` of ``y``, its pullback's ``c_i`` must satisfy, along any
direction ``v_i`` of argument ``i``,

    Re Σ g · dy  ==  Re Σ c_i · v_i ,      dy = (fn(.., a_i + h v_i, ..) − fn(.., a_i − h v_i, ..)) / 2h

(the dot-product test: the pullback is the transpose of the real-linear derivative). A real
argument gets a real direction and must get a real cotangent; a real result gets a real
cotangent. Forward mode is checked the same way: ``jvp`` along ``v_i`` must equal ``dy``.
"""
import numpy as np
import pytest

from tapegrad import jvp, rrule
from tapegrad.tangents import NO_TANGENT, ZERO, getitem


def _same_kind(seq, items):
    """`items` in a sequence of `seq`'s type (a named tuple such as slogdet's takes them by position)."""
    return type(seq)(*items) if hasattr(seq, "_fields") else type(seq)(items)


def random_like(rng, x):
    """A random value of `x`'s shape: complex for a complex `x`, real otherwise."""
    if isinstance(x, (tuple, list)):
        return _same_kind(x, [random_like(rng, v) for v in x])
    shape = np.shape(x)
    v = rng.standard_normal(shape)
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(shape)
    return v if shape else v.item()


def _pair(a, b):
    """Re Σ a·b, over the elements of tuples too (no conjugate: autograd's convention)."""
    if isinstance(a, (tuple, list)):
        return sum(_pair(u, w) for u, w in zip(a, b))
    if a is ZERO or a is NO_TANGENT or a is None:
        return 0.0
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _differentiable(args, wrt):
    if wrt is not None:
        return wrt
    return [i for i, a in enumerate(args)
            if np.asarray(a).dtype.kind in "fc" and not isinstance(a, (str, bool))]


def _central(fn, args, kwargs, i, v, h):
    plus = list(args)
    minus = list(args)
    plus[i] = np.asarray(args[i]) + h * np.asarray(v)
    minus[i] = np.asarray(args[i]) - h * np.asarray(v)
    yp, ym = fn(*plus, **kwargs), fn(*minus, **kwargs)
    if isinstance(yp, (tuple, list)):
        return _same_kind(yp, [_difference(p, m, h) for p, m in zip(yp, ym)])
    return _difference(yp, ym, h)


def _difference(yp, ym, h):
    """(yp - ym) / 2h; zero for an integer or boolean part of a result (cho_factor's flag)."""
    yp, ym = np.asarray(yp), np.asarray(ym)
    if yp.dtype.kind not in "fc":
        return np.zeros(yp.shape)
    return (yp - ym) / (2 * h)


def check_complex_rule(fn, *args, rng, kwargs=None, wrt=None, h=1e-6, rtol=1e-6, atol=1e-9):
    """The dot-product test of ``rrule(fn, *args, **kwargs)``'s pullback on random directions,
    one argument at a time (`wrt`: their indices; by default every float or complex one)."""
    kwargs = kwargs or {}
    y, back = rrule(fn, *args, **kwargs)
    g = random_like(rng, y)
    cotangents = back(g)
    for i in _differentiable(args, wrt):
        c = getitem(cotangents, i + 1)
        if c is not ZERO and not np.iscomplexobj(args[i]):
            assert np.asarray(c).dtype.kind != "c", (
                f"{fn.__name__}: the cotangent of real argument {i} is complex ({np.asarray(c).dtype})")
        if c is not ZERO and c is not NO_TANGENT:
            assert np.shape(c) == np.shape(args[i]), f"{fn.__name__}: cotangent {i} has shape {np.shape(c)}"
        v = random_like(rng, args[i])
        lhs = _pair(g, _central(fn, args, kwargs, i, v, h))
        rhs = _pair(c, v)
        assert abs(lhs - rhs) <= atol + rtol * max(abs(lhs), abs(rhs)), (
            f"{fn.__name__} argument {i}: Re Σ g·dy = {lhs!r} but Re Σ c·v = {rhs!r}")


def check_complex_jvp(fn, *args, rng, kwargs=None, wrt=None, h=1e-6, rtol=1e-6, atol=1e-9):
    """Forward mode on complex values: ``jvp`` along a random direction of each argument in turn
    (the others held) equals the central difference ``dy``."""
    kwargs = kwargs or {}
    for i in _differentiable(args, wrt):
        v = random_like(rng, args[i])

        def along(a, i=i):  # the other arguments held as constants of the function
            return fn(*args[:i], a, *args[i + 1:], **kwargs)

        _, dy = jvp(along, (args[i],), (v,))
        expected = _central(fn, args, kwargs, i, v, h)
        if isinstance(expected, (tuple, list)):
            pairs = list(zip(dy, expected))
        else:
            pairs = [(dy, expected)]
        for got, want in pairs:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * 1e3,
                                       err_msg=f"{fn.__name__} argument {i}: jvp differs from central differences")


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts),
    written as Re Σ (2 z conj(z) - z²) so that the complex values meet np.real only at the end."""
    return np.real(np.sum(2 * z * np.conj(z) - z * z))


def complex_of(x, y):
    """x + iy for real x and y, made with casts (whose pullbacks take the real part of a complex
    cotangent) so that every product and sum in it is of complex values."""
    return np.astype(x, np.complex128) + 1j * np.astype(y, np.complex128)


def made_args(makes, rng):
    """The arguments of a table row: each entry a value, or a function of `rng` that makes one."""
    return [m(rng) if callable(m) else m for m in makes]


def complex_table_tests(table):
    """The two tests of a family's table of complex calls, ``(fn, args, kwargs, wrt)`` rows:
    the dot-product test of each rule's pullback, and forward mode against central differences.
    A test module binds them to its own names: ``test_complex_rule_pullback, test_complex_rule_jvp
    = complex_table_tests(COMPLEX_TABLE)``."""
    @pytest.mark.parametrize("fn, args, kwargs, wrt", table)
    def test_complex_rule_pullback(fn, args, kwargs, wrt, rng):
        """The dot-product test of each rule on complex (and mixed real and complex) arguments."""
        check_complex_rule(fn, *args, rng=rng, kwargs=kwargs, wrt=wrt)

    @pytest.mark.parametrize("fn, args, kwargs, wrt", table)
    def test_complex_rule_jvp(fn, args, kwargs, wrt, rng):
        """Forward mode through each rule on complex arguments matches central differences."""
        check_complex_jvp(fn, *args, rng=rng, kwargs=kwargs, wrt=wrt)

    return test_complex_rule_pullback, test_complex_rule_jvp
