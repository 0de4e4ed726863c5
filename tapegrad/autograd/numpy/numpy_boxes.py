"""autograd's ``numpy_boxes``: its `ArrayBox` is tapegrad's traced value, `tapegrad.tracer.Tracer`.

Examples
--------
>>> from tapegrad.autograd.numpy.numpy_boxes import ArrayBox
>>> from tapegrad.autograd import grad
>>> grad(lambda x: 2.0 * x if isinstance(x, ArrayBox) else 0.0)(1.0)
2.0
"""
from ...tracer import Tracer

__all__ = ["ArrayBox"]

ArrayBox = Tracer
