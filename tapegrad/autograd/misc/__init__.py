"""autograd's ``misc``: `flatten` and `flatten_func` (`tapegrad.optim.flatten`, dict entries
in sorted-key order as autograd's), `optimizers` (`tapegrad.optim`'s), `fixed_points`, `tracers.const_graph`.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.misc import flatten
>>> flatten({"b": np.ones(2), "a": 3.0})[0]
array([3., 1., 1.])
"""
from . import fixed_points, optimizers, tracers  # noqa: F401
from .flatten import flatten, flatten_func
from .tracers import const_graph

__all__ = ["flatten", "flatten_func", "const_graph"]
