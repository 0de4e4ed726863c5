"""autograd's ``util``: `subvals`, `subval`, and the deprecated `quick_grad_check`.

Examples
--------
>>> from tapegrad.autograd.util import subval
>>> subval((1, 2, 3), 1, 9)
(1, 9, 3)
"""
import warnings

from .test_util import check_grads
from .wrap_util import subvals

__all__ = ["subvals", "subval", "quick_grad_check"]


def subval(x, i, v):
    """The tuple `x` with ``x[i]`` replaced by `v`."""
    return subvals(x, [(i, v)])


def quick_grad_check(fun, arg0, extra_args=(), kwargs={}, verbose=True, eps=1e-4, rtol=1e-4, atol=1e-6, rs=None):
    """Deprecated in autograd as here: `check_grads` of ``fun(arg0, *extra_args, **kwargs)`` in
    `arg0`, reverse mode, first order (raises AssertionError if the gradient is off)."""
    warnings.warn("quick_grad_check is deprecated; use tapegrad.autograd.test_util.check_grads "
                  "(or tapegrad.check_grad)", DeprecationWarning, stacklevel=2)
    check_grads(lambda a: fun(a, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)
