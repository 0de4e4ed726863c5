"""autograd's ``test_util``: `check_grads`, `check_vjp`, `check_jvp`, `combo_check`, each a
call of `tapegrad.check_grad` (reverse and forward mode against central differences along
random directions; ``order=2`` checks the derivative functions too).

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.test_util import check_equivalent, check_grads
>>> check_grads(lambda x: np.sum(np.sin(x) * x), modes=["rev", "fwd"], order=2)(np.array([0.5, 1.0]))
>>> check_equivalent({"a": 1.0}, {"a": 1.0 + 1e-9})
"""
import itertools

import numpy as np

from ..checks import check_grad
from ..optim import flatten
from .wrap_util import Unary

__all__ = ["check_grads", "check_vjp", "check_jvp", "combo_check", "scalar_close", "check_equivalent",
           "TOL", "RTOL", "EPS"]

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b):
    """autograd's closeness of two numbers: within TOL, or within RTOL relative to their sum."""
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def check_equivalent(x, y):
    """Assert that `x` and `y`, numbers or arrays in the same structure, are equal to RTOL."""
    fx, fy = flatten(x)[0], flatten(y)[0]
    assert fx.shape == fy.shape, f"Structure mismatch:\nx: {x}\ny: {y}"
    assert np.allclose(fx, fy, rtol=RTOL, atol=TOL), f"Value mismatch:\nx: {x}\ny: {y}"


def check_grads(f, argnum=0, modes=("fwd", "rev"), order=2):
    """``check_grads(f, argnum, modes, order)(*args)``: check `f`'s derivatives in argument(s)
    `argnum` in `modes` to `order`; raises AssertionError if one is off."""
    bad = [m for m in modes if m not in ("fwd", "rev")]
    if bad:
        raise ValueError(f"modes are 'fwd' and 'rev', not {bad}")

    def checked(*args, **kwargs):
        unary = Unary(f, argnum, args, kwargs)
        if isinstance(argnum, int):
            check_grad(unary, args[argnum], modes=tuple(modes), order=order)
        else:  # one positional argument per position, so that each is checked
            check_grad(lambda *xs: unary(xs), *[args[i] for i in argnum], modes=tuple(modes), order=order)

    return checked


def check_vjp(f, x):
    """Check reverse mode at `x` against central differences."""
    check_grad(f, x, modes=("rev",))


def check_jvp(f, x):
    """Check forward mode at `x` against central differences."""
    check_grad(f, x, modes=("fwd",))


def combo_check(fun, *args, **kwargs):
    """``combo_check(fun, argnums, modes=..., order=...)(*arg_values, **kwarg_values)``: check
    every combination of the given argument values (each a list of candidates)."""
    def _combo_check(*arg_lists, **kwarg_lists):
        kwarg_key_vals = [[(k, v) for v in vs] for k, vs in kwarg_lists.items()]
        for _args in itertools.product(*arg_lists):
            for _kwargs in itertools.product(*kwarg_key_vals):
                check_grads(fun, *args, **kwargs)(*_args, **dict(_kwargs))

    return _combo_check
