"""``import tapegrad.autograd.numpy as np`` is numpy: every name is looked up in numpy when it
is used, so that a traced function calls numpy's own functions, which tapegrad differentiates,
and the stand-ins tapegrad puts under numpy's names while it traces (``np.array`` of traced
values, ``np.zeros`` buffers, ``np.mean`` of a list) are found too.

Besides numpy's names: the submodules autograd's numpy has (`linalg`, `fft`, `random`,
`numpy_wrapper`, `numpy_boxes`, `numpy_vspaces`, `numpy_vjps`, `numpy_jvps`), and the names
autograd's numpy module adds (`primitive`, `notrace_primitive`, `concatenate_args`,
`array_from_args`, `make_diagonal`, `metadata`, ...).

Examples
--------
>>> import numpy
>>> import tapegrad.autograd.numpy as np
>>> np.sin is numpy.sin, np.linalg.inv is numpy.linalg.inv
(True, True)
>>> from tapegrad.autograd import grad
>>> grad(lambda x: np.sum(np.array([x, 2.0 * x]) ** 2))(1.0)
10.0
"""
import numpy as _np

from ..extend import Box, notrace_primitive, primitive
from . import fft, linalg, numpy_boxes, numpy_jvps, numpy_vjps, numpy_vspaces, numpy_wrapper, random  # noqa: F401
from .numpy_wrapper import (  # noqa: F401
    array_from_args,
    c_class,
    concatenate_args,
    make_diagonal,
    metadata,
    parse_einsum_input,
    r_class,
    wrap_if_boxes_inside,
    wrap_intdtype,
    wrap_namespace,
)

numpy_version = _np.__version__
_OWN = {name for name in globals() if not name.startswith("_")}
#: ``from tapegrad.autograd.numpy import *`` binds numpy's names as ``from numpy import *`` does
#: (numpy's own objects, taken at import: see the README on names bound from numpy at import)
__all__ = sorted(_OWN | set(getattr(_np, "__all__", ())))


def __getattr__(name):
    try:
        return getattr(_np, name)
    except AttributeError:
        raise AttributeError(f"module 'tapegrad.autograd.numpy' (numpy) has no attribute {name!r}") from None


def __dir__():
    return sorted(_OWN | set(dir(_np)))
