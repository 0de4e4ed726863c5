"""autograd's ``test_util``: `check_grads`, `check_vjp`, `check_jvp`, `combo_check`, each a
call of `tapegrad.check_grad` (reverse and forward mode against central differences along
random directions; ``order=2`` checks the derivative functions too).

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.test_util import check_grads
>>> check_grads(lambda x: np.sum(np.sin(x) * x), modes=["rev", "fwd"], order=2)(np.array([0.5, 1.0]))
"""
import itertools

from ..checks import check_grad
from .wrap_util import Unary

__all__ = ["check_grads", "check_vjp", "check_jvp", "combo_check"]


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
