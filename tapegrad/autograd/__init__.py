"""autograd's API over tapegrad: replace ``autograd`` with ``tapegrad.autograd`` in a program's
imports and it runs, with the same results.

Laid out as autograd is (``tapegrad.autograd.numpy``, ``.scipy``, ``.extend``, ``.misc``,
``.builtins``, ``.test_util``), each name a thin map onto tapegrad's own entry points:
`grad` is `tapegrad.pullback` seeded with ones, `jacobian` is `tapegrad.jacobian`, `hessian` is
`tapegrad.hessian`, `extend.defvjp` registers a `tapegrad.rrule`, `misc.optimizers` are
`tapegrad.optim`'s. ``tapegrad.autograd.numpy`` is numpy itself (tapegrad differentiates
numpy's own functions) plus the few names autograd's numpy module adds.

Where autograd and tapegrad differ on purpose, the layer keeps tapegrad's behaviour: ``float(x)``
of a traced value, a bool or a string result, a value written into a plain array raise
tapegrad's errors naming the fix, where autograd would give a wrong or a silently zero
gradient (``docs/guide/autograd.rst``).

Examples
--------
>>> import tapegrad.autograd.numpy as np
>>> from tapegrad.autograd import grad
>>> grad(lambda x: np.tanh(x))(0.0)
1.0
"""
from . import builtins, core, differential_operators, extend, misc, numpy, scipy, test_util, tracer, util, wrap_util  # noqa: F401
from .builtins import dict, isinstance, list, tuple, type
from .differential_operators import (
    checkpoint,
    deriv,
    elementwise_grad,
    grad,
    grad_and_aux,
    grad_named,
    hessian,
    hessian_tensor_product,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
    vector_jacobian_product,
)
from .extend import primitive

__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian", "hessian",
           "hessian_tensor_product", "hessian_vector_product", "make_vjp", "make_jvp", "make_hvp",
           "make_ggnvp", "vector_jacobian_product", "tensor_jacobian_product", "holomorphic_grad",
           "deriv", "grad_named", "multigrad_dict", "checkpoint", "primitive",
           "tuple", "list", "dict", "isinstance", "type"]
