"""autograd's differential operators, each a few lines over tapegrad's entry points.

Every operator takes ``(fun, argnum=0, ...)`` and returns a function of `fun`'s arguments, as
in autograd; `argnum` may be a tuple, and then the operator sees those arguments as one tuple.
Gradients are plain values in the argument's structure, with zeros where nothing flows
(autograd's convention; tapegrad's own entry points say ``ZeroTangent()`` there).

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad, value_and_grad
>>> grad(lambda x, y: x * y + np.sin(x), 1)(0.0, 3.0)
0.0
>>> value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
(5.0, array([2., 4.]))
"""
import inspect
import warnings
from collections import OrderedDict

import numpy as np

from ..argtangents import fill_zeros
from ..context import primitive
from ..forward import jacobian as _tg_jacobian
from ..forward import jvp
from ..errors import SeedError
from ..grad import grad as tapegrad_grad
from ..grad import pullback
from ..registry import rrule
from ..second_order import hessian as _tg_hessian
from ..second_order import hvp
from ..structures import split
from ..tangents import NO_TANGENT, ZERO
from .wrap_util import unary_to_nary

__all__ = ["make_vjp", "make_jvp", "grad", "elementwise_grad", "deriv", "jacobian", "holomorphic_grad",
           "grad_named", "hessian", "make_hvp", "hessian_tensor_product", "hessian_vector_product",
           "tensor_jacobian_product", "vector_jacobian_product", "make_ggnvp", "value_and_grad",
           "grad_and_aux", "multigrad_dict", "checkpoint", "make_jvp_reversemode"]


def vspace_ones(y):
    """autograd's ``vspace(y).ones()``: the seed of a scalar-valued function."""
    return 1.0 if np.ndim(y) == 0 and not isinstance(y, np.ndarray) else np.ones(np.shape(y), np.result_type(y, float))


def vspace_zeros(y):
    """autograd's ``vspace(y).zeros()``, in `y`'s structure (the structure registry's walk)."""
    if split(y, objects=True) is not None:
        return fill_zeros(ZERO, y)
    return 0.0 if np.ndim(y) == 0 and not isinstance(y, np.ndarray) else np.zeros(np.shape(y), np.result_type(y, float))


def _make_vjp(fun, x):
    y, back = pullback(fun, x)

    def vjp(g):
        return fill_zeros(back(g)[1], x)

    return vjp, y


def unary_make_vjp(fun, x):
    """autograd's ``core.make_vjp(fun, x) -> (vjp, value)``, of a function of one argument."""
    return _make_vjp(fun, x)


def unary_make_jvp(fun, x):
    """autograd's ``core.make_jvp(fun, x) -> (v -> (value, J v))``."""
    return lambda v: jvp(fun, (x,), (v,))


@unary_to_nary
def make_vjp(fun, x):
    """``make_vjp(fun, argnum=0)(*args) -> (vjp, value)``, with ``vjp(g)`` the vector-Jacobian
    product: `tapegrad.pullback` in autograd's order.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import make_vjp
    >>> vjp, y = make_vjp(lambda x: x ** 2)(np.array([1.0, 3.0]))
    >>> vjp(np.array([1.0, 10.0]))
    array([ 2., 60.])
    """
    return _make_vjp(fun, x)


@unary_to_nary
def make_jvp(fun, x):
    """``make_jvp(fun, argnum=0)(*args) -> (v -> (value, J v))``: `tapegrad.jvp`.

    Examples
    --------
    >>> from tapegrad.autograd import make_jvp
    >>> make_jvp(lambda x: x ** 3)(2.0)(1.0)
    (8.0, 12.0)
    """
    return lambda v: jvp(fun, (x,), (v,))


def _scalar_vjp(fun, x, what):
    vjp, ans = _make_vjp(fun, x)
    if np.size(ans) != 1 or isinstance(ans, (tuple, list, dict)):
        raise TypeError(f"{what} only applies to real scalar-output functions. "
                        "Try jacobian, elementwise_grad or holomorphic_grad.")
    return vjp, ans


def _value_and_grad(fun, x, what):
    """`tapegrad.grad`, whose sweep is not recorded; a result that needs a seed (an array, a
    complex number) goes through a pullback, seeded with ones as autograd seeds it."""
    try:
        value, (_, dx) = tapegrad_grad(fun, x)
    except SeedError:
        vjp, ans = _scalar_vjp(fun, x, what)
        return ans, vjp(vspace_ones(ans))
    return value, fill_zeros(dx, x)


@unary_to_nary
def grad(fun, x):
    """The gradient of a scalar-valued `fun` with respect to argument `argnum` (an int or a tuple).

    Examples
    --------
    >>> from tapegrad.autograd import grad
    >>> grad(lambda a, b: a * b ** 2, (0, 1))(2.0, 3.0)
    (9.0, 12.0)
    """
    return _value_and_grad(fun, x, "Grad")[1]


@unary_to_nary
def elementwise_grad(fun, x):
    """The sum of the Jacobian's rows, in one reverse pass: the derivative of each element for
    an elementwise `fun`.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import elementwise_grad
    >>> elementwise_grad(np.tanh)(np.array([0.0, 1.0]))
    array([1.        , 0.41997434])
    """
    vjp, ans = _make_vjp(fun, x)
    if np.iscomplexobj(ans):
        raise TypeError("Elementwise_grad only applies to real-output functions.")
    return vjp(vspace_ones(ans))


@unary_to_nary
def deriv(fun, x):
    """The derivative along ones: ``jvp(fun, (x,), (ones,))[1]``.

    Examples
    --------
    >>> from tapegrad.autograd import deriv
    >>> deriv(lambda x: x ** 3)(2.0)
    12.0
    """
    return jvp(fun, (x,), (vspace_ones(x),))[1]


@unary_to_nary
def jacobian(fun, x):
    """The Jacobian, shaped ``fun(x).shape + x.shape``: `tapegrad.jacobian` in reverse mode.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import jacobian
    >>> jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    return _tg_jacobian(fun, x)


@unary_to_nary
def holomorphic_grad(fun, x):
    """``f'(z)`` of a holomorphic `fun`: the gradient of its real part (tapegrad's seed 1.0).

    Examples
    --------
    >>> from tapegrad.autograd import holomorphic_grad
    >>> holomorphic_grad(lambda z: z ** 3)(1 + 2j)
    (-9+12j)
    """
    if not np.iscomplexobj(x):
        warnings.warn("Input to holomorphic_grad is not complex")
    return _make_vjp(fun, x)[0](1.0)


def grad_named(fun, argname):
    """The gradient with respect to the argument called `argname`.

    Examples
    --------
    >>> from tapegrad.autograd import grad_named
    >>> grad_named(lambda a, b: a * b, "b")(2.0, 3.0)
    2.0
    """
    return grad(fun, inspect.getfullargspec(fun).args.index(argname))


@unary_to_nary
def hessian(fun, x):
    """The Hessian of a scalar-valued `fun` (`tapegrad.hessian`, reverse over reverse); of an
    array-valued one, the Jacobian of its Jacobian.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import hessian
    >>> hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    try:
        return _tg_hessian(fun, x)
    except SeedError:  # an array result: autograd's jacobian of jacobian, shaped out + in + in
        return _tg_jacobian(lambda x: _tg_jacobian(fun, x), x)


@unary_to_nary
def make_hvp(fun, x):
    """``make_hvp(fun, argnum=0)(*args) -> (v -> H v, gradient)`` (`tapegrad.hvp`).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import make_hvp
    >>> hvp_at, g = make_hvp(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    >>> hvp_at(np.array([1.0, 0.0])), g
    (array([6., 0.]), array([ 3., 12.]))
    """
    return (lambda v: hvp(fun, x, v)), grad(fun)(x)


def hessian_tensor_product(fun, argnum=0):
    """``hessian_tensor_product(fun, argnum)(*args, v) -> H v`` (`tapegrad.hvp`).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import hessian_vector_product
    >>> hessian_vector_product(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    array([ 0., 12.])
    """
    def hvp_of(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        along = unary_to_nary(lambda f, x: hvp(f, x, vector))
        return along(fun, argnum)(*args, **kwargs)

    return hvp_of


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """``tensor_jacobian_product(fun, argnum)(*args, v)``: `v` contracted with the leading
    dimensions of ``fun(*args)``, then differentiated (a vector-Jacobian product when `v` has
    the result's shape).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import vector_jacobian_product
    >>> vector_jacobian_product(lambda x: x ** 2)(np.array([1.0, 3.0]), np.array([1.0, 10.0]))
    array([ 2., 60.])
    """
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return np.tensordot(vector, fun(*args, **kwargs), axes=np.ndim(vector))

    def product(*args, **kwargs):
        vector = args[-1]
        y_ndim = np.ndim(fun(*args[:-1], **kwargs))
        if np.ndim(vector) == y_ndim:  # the whole result: one pullback
            return grad(vector_dot_fun, argnum)(*args, **kwargs)
        return jacobian(vector_dot_fun, argnum)(*args, **kwargs)

    return product


vector_jacobian_product = tensor_jacobian_product
#: (autograd's reverse-of-reverse jvp; tapegrad's forward mode gives the same numbers)
make_jvp_reversemode = make_jvp


def make_ggnvp(f, g=lambda x: 1.0 / 2 * np.sum(x**2, axis=-1), f_argnum=0):
    """``make_ggnvp(f, g, f_argnum)(*args) -> (v -> Jᵀ H_g J v)``, the generalized Gauss-Newton
    product of ``g(f(x))``: one pullback of `f`, one `tapegrad.jvp` of `f`, one `tapegrad.hvp` of `g`.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import make_ggnvp
    >>> make_ggnvp(lambda x: 2 * x)(np.array([1.0, 2.0]))(np.array([1.0, 0.0]))
    array([4., 0.])
    """
    def _make_ggnvp(fun, x):
        f_vjp, f_x = _make_vjp(fun, x)

        def ggnvp(v):
            jv = jvp(fun, (x,), (v,))[1]
            return f_vjp(hvp(g, f_x, jv))

        return ggnvp

    return unary_to_nary(_make_ggnvp)(f, f_argnum)


@unary_to_nary
def value_and_grad(fun, x):
    """``(value, gradient)`` of a scalar-valued `fun` (`tapegrad.grad`), for scipy.optimize's ``jac=True``.

    Examples
    --------
    >>> from tapegrad.autograd import value_and_grad
    >>> value_and_grad(lambda x: x ** 2)(3.0)
    (9.0, 6.0)
    """
    return _value_and_grad(fun, x, "value_and_grad")


@unary_to_nary
def grad_and_aux(fun, x):
    """``(gradient of the first output, second output)`` of a `fun` returning two values.

    Examples
    --------
    >>> from tapegrad.autograd import grad_and_aux
    >>> grad_and_aux(lambda x: (x ** 2, x + 1))(3.0)
    (6.0, 4.0)
    """
    vjp, (ans, aux) = _make_vjp(lambda x: tuple(fun(x)), x)
    return vjp((vspace_ones(ans), vspace_zeros(aux))), aux


def multigrad_dict(fun):
    """The gradients with respect to every argument, as an OrderedDict by argument name.

    Examples
    --------
    >>> from tapegrad.autograd import multigrad_dict
    >>> dict(multigrad_dict(lambda a, b=2.0: a * b)(3.0))
    {'a': 2.0, 'b': 3.0}
    """
    sig = inspect.signature(fun)
    kinds = {name: p.kind for name, p in sig.parameters.items()}
    var_pos = [n for n, k in kinds.items() if k == inspect.Parameter.VAR_POSITIONAL]
    var_kwd = [n for n, k in kinds.items() if k == inspect.Parameter.VAR_KEYWORD]
    names = [n for n in kinds if n not in var_pos + var_kwd]

    def gradfun(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        argdict = OrderedDict((name, bound.arguments[name]) for name in sig.parameters)

        def newfun(dct):
            extra = tuple(dct[var_pos[0]]) if var_pos else ()
            kw = dict(dct[var_kwd[0]]) if var_kwd else {}
            return fun(*(tuple(dct[n] for n in names) + extra), **kw)

        grads = grad(newfun)(dict(argdict))
        return OrderedDict((name, grads[name]) for name in argdict)

    return gradfun


def checkpoint(fun):
    """`fun` as one op whose pullback runs `fun` again (`tapegrad.pullback`) instead of keeping
    its intermediate values: memory traded for time.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.autograd import checkpoint, grad
    >>> grad(lambda x: checkpoint(np.sin)(x) * 2.0)(0.0)
    2.0
    """
    wrapped = primitive(fun)

    @rrule(wrapped)
    def checkpoint_rrule(*args, **kwargs):
        def checkpoint_pullback(dy):
            _, back = pullback(fun, *args, **kwargs)
            return (NO_TANGENT, *back(dy)[1:])
        return fun(*args, **kwargs), checkpoint_pullback

    checkpoint_rrule.__module__ = getattr(fun, "__module__", None)  # (the user's rule, not tapegrad's)
    return wrapped
