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
from .wrap_util import unary_to_nary

__all__ = ["check_grads", "check_vjp", "check_jvp", "combo_check"]


@unary_to_nary
def check_grads(f, x, modes=("fwd", "rev"), order=2):
    """Check `f`'s derivatives at `x` in `modes` to `order`; raises AssertionError if one is off."""
    bad = [m for m in modes if m not in ("fwd", "rev")]
    if bad:
        raise ValueError(f"modes are 'fwd' and 'rev', not {bad}")
    check_grad(f, x, modes=tuple(modes), order=order)


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
