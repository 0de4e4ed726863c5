"""autograd's ``numpy_vspaces``: tapegrad has no vector spaces (a tangent has its value's type);
`ArrayVSpace` is kept as a name for `VSpace.register` calls in ported code.

Examples
--------
>>> from tapegrad.autograd.numpy.numpy_vspaces import ArrayVSpace
>>> ArrayVSpace.__name__
'VSpace'
"""
from ..extend import VSpace

__all__ = ["ArrayVSpace", "ComplexArrayVSpace"]

ArrayVSpace = ComplexArrayVSpace = VSpace
