"""autograd's ``misc.optimizers``: `sgd`, `rmsprop`, `adam` are `tapegrad.optim`'s (on any
structure, ``grad(x, i)`` and ``callback(x, i, g)`` as in autograd); `unflatten_optimizer`
makes an optimizer written for flat vectors take structures, as autograd's does.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad
>>> from tapegrad.autograd.misc.optimizers import adam
>>> objective = lambda p, i: np.sum((p["w"] - 1.0) ** 2)
>>> adam(grad(objective), {"w": np.zeros(2)}, num_iters=400, step_size=0.05)["w"].round(3)
array([1., 1.])
"""
import functools

from ...optim import adam, rmsprop, sgd
from .flatten import flatten

__all__ = ["unflatten_optimizer", "sgd", "rmsprop", "adam"]


def unflatten_optimizer(optimize):
    """``optimize(grad, x, callback, ...)`` on flat 1-d arrays, made to take and return structures."""
    @functools.wraps(optimize)
    def _optimize(grad, x0, callback=None, *args, **kwargs):
        _x0, unflatten = flatten(x0)

        def _grad(x, i):
            return flatten(grad(unflatten(x), i))[0]

        _callback = (lambda x, i, g: callback(unflatten(x), i, unflatten(g))) if callback else None
        return unflatten(optimize(_grad, _x0, _callback, *args, **kwargs))

    return _optimize
