"""autograd's ``flatten`` and ``flatten_func`` over `tapegrad.optim.flatten`.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.misc.flatten import flatten_func
>>> f, unflatten, x0 = flatten_func(lambda p: {"w": 2 * p["w"]}, {"w": np.ones(2)})
>>> f(x0)
array([2., 2.])
"""
from ...optim import flatten as _flatten_any

__all__ = ["flatten", "flatten_func"]


def flatten(value):
    """``(vector, unflatten)`` of nested tuples, lists and dicts of arrays and numbers (dict
    entries in sorted-key order); both halves can be differentiated through."""
    return _flatten_any(value, sort_keys=True)


def flatten_func(func, example):
    """``(flat_func, unflatten, flat_example)``: `func` taking and giving flat vectors."""
    _ex, unflatten = flatten(example)

    def _func(_x, *args):
        return flatten(func(unflatten(_x), *args))[0]

    return _func, unflatten, _ex
