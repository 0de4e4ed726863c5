"""autograd's ``util``: `subvals`, `subval`.

Examples
--------
>>> from tapegrad.autograd.util import subval
>>> subval((1, 2, 3), 1, 9)
(1, 9, 3)
"""
from .wrap_util import subvals

__all__ = ["subvals", "subval"]


def subval(x, i, v):
    """The tuple `x` with ``x[i]`` replaced by `v`."""
    return subvals(x, [(i, v)])
