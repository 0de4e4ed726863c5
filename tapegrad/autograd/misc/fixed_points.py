"""autograd's ``fixed_point(f, a, x0, distance, tol)``: iterate ``x = f(a)(x)`` from `x0` until
``distance(x, x_prev) <= tol``; its derivative in `a` is implicit (the iterations are not
differentiated): at the fixed point x*, the cotangent w solves ``w = g + (∂f/∂x)ᵀ w``, found by
the same iteration, and the gradient is ``(∂f/∂a)ᵀ w`` (one `tapegrad.pullback` each).

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad
>>> from tapegrad.autograd.misc.fixed_points import fixed_point
>>> newton_sqrt = lambda a: lambda x: 0.5 * (x + a / x)
>>> dist = lambda x, y: np.abs(x - y)
>>> round(float(grad(lambda a: fixed_point(newton_sqrt, a, 1.0, dist, 1e-12))(2.0)), 10)  # 1 / (2 √2)
0.3535533906
"""
from ...context import primitive
from ...grad import pullback
from ...registry import rrule, whole
from ...tangents import NO_TANGENT, ZERO
from ..differential_operators import vspace_zeros
from ..wrap_util import Unary

__all__ = ["fixed_point"]


@primitive
def fixed_point(f, a, x0, distance, tol):
    """The fixed point of ``f(a)`` reached from `x0`."""
    _f = f(a)
    x, x_prev = _f(x0), x0
    while distance(x, x_prev) > tol:
        x, x_prev = _f(x), x
    return x


def _apply(f, a, x):
    return f(a)(x)


@rrule(fixed_point, formula=whole(
    None, "(∂f/∂a)ᵀ w at x* = {y}, where w = {dy} + (∂f/∂x)ᵀ w (iterated as the forward pass)", None, None, None))
def fixed_point_rrule(f, a, x0, distance, tol):
    x_star = fixed_point(f, a, x0, distance, tol)

    def fixed_point_pullback(g):
        # (Unary: the other values are constants, not inputs found again inside a closure)
        _, back_x = pullback(Unary(_apply, 2, (f, a, x_star), {}), x_star)
        # w = g + (∂f/∂x)ᵀ w, by the same iteration as the forward pass
        w = fixed_point(lambda _: lambda w: g + back_x(w)[1], None, vspace_zeros(x_star), distance, tol)
        _, back_a = pullback(Unary(_apply, 1, (f, a, x_star), {}), a)
        return NO_TANGENT, NO_TANGENT, back_a(w)[1], ZERO, NO_TANGENT, NO_TANGENT

    return x_star, fixed_point_pullback
