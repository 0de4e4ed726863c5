"""The helpers of autograd's ``numpy_wrapper`` that programs call, on numpy's own functions.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.numpy.numpy_wrapper import concatenate_args, make_diagonal
>>> concatenate_args(0, np.ones(1), np.zeros(2))
array([1., 0., 0.])
>>> make_diagonal(np.array([1.0, 2.0]))
array([[1., 0.],
       [0., 2.]])
"""
import types

import numpy as np

__all__ = ["concatenate_args", "array_from_args", "make_diagonal", "metadata", "parse_einsum_input",
           "wrap_if_boxes_inside", "wrap_intdtype", "wrap_namespace", "c_class", "r_class"]


def concatenate_args(axis, *args):
    """``np.concatenate(args, axis)``."""
    return np.concatenate(args, axis)


def array_from_args(array_args, array_kwargs, *args):
    """``np.array(args, *array_args, **array_kwargs)``."""
    return np.array(args, *array_args, **array_kwargs)


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """A diagonal matrix with `D` on its diagonal (along its last axis, as autograd's)."""
    if offset != 0:
        raise NotImplementedError("make_diagonal: offset other than 0 is not written")
    n = np.shape(D)[-1]
    return D[..., None] * np.eye(n)


def metadata(A):
    """``(shape, ndim, dtype, iscomplexobj)`` of `A`."""
    return np.shape(A), np.ndim(A), np.result_type(A), np.iscomplexobj(A)


def parse_einsum_input(*args):
    """numpy's own einsum parser."""
    return np.core.einsumfunc._parse_einsum_input(args)


def wrap_if_boxes_inside(raw_array, slow_op_name=None):
    """The array itself: tapegrad sees traced values inside lists without a wrapper."""
    return raw_array


def wrap_intdtype(cls):
    """numpy's scalar type `cls` itself."""
    return cls


def wrap_namespace(old, new):
    """Copy the functions and types of namespace `old` into the dict `new`, as they are:
    tapegrad differentiates numpy's own functions."""
    for name, obj in old.items():
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, type)) or name in ("pi", "e", "inf", "nan"):
            new[name] = obj


c_class = type(np.c_)
r_class = type(np.r_)


def __getattr__(name):  # (autograd's numpy_wrapper holds every numpy name too)
    return getattr(np, name)
