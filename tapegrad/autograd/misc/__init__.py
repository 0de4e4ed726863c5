"""autograd's ``misc``: `flatten` and `flatten_func` (`tapegrad.optim.flatten`, dict entries
in sorted-key order as autograd's), `optimizers` (`tapegrad.optim`'s), `fixed_points`.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.misc import flatten
>>> flatten({"b": np.ones(2), "a": 3.0})[0]
array([3., 1., 1.])
"""
from . import fixed_points, optimizers  # noqa: F401
from .flatten import flatten, flatten_func

__all__ = ["flatten", "flatten_func"]
