"""``tapegrad.autograd.numpy.linalg`` is ``numpy.linalg``, each name looked up when it is used.

Examples
--------
>>> import numpy
>>> import tapegrad.autograd.numpy.linalg as linalg
>>> linalg.__name__, getattr(linalg, "inv") is numpy.linalg.inv
('tapegrad.autograd.numpy.linalg', True)
"""
import numpy as _np

from .lookup import looked_up_in

__getattr__, __dir__ = looked_up_in(_np.linalg)
