"""autograd's ``core``, for programs that import from it: `make_vjp` and `make_jvp` of a
function of one argument, and the names of ``extend``.

Examples
--------
>>> from tapegrad.autograd.core import make_vjp
>>> vjp, y = make_vjp(lambda x: x ** 2, 3.0)
>>> y, vjp(1.0)
(9.0, 6.0)
"""
from .differential_operators import unary_make_jvp as make_jvp
from .differential_operators import unary_make_vjp as make_vjp
from .extend import (  # noqa: F401
    Box,
    SparseObject,
    VSpace,
    def_linear,
    defjvp,
    defjvp_argnum,
    defjvp_argnums,
    defvjp,
    defvjp_argnum,
    defvjp_argnums,
    primitive,
    vspace,
)

__all__ = ["make_vjp", "make_jvp", "primitive", "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp",
           "defjvp_argnum", "defjvp_argnums", "def_linear", "vspace", "VSpace", "Box", "SparseObject"]
