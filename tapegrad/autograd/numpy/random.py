"""``tapegrad.autograd.numpy.random`` is ``numpy.random``, each name looked up when it is used.

Examples
--------
>>> import numpy
>>> import tapegrad.autograd.numpy.random as random
>>> random.__name__, getattr(random, "normal") is numpy.random.normal
('tapegrad.autograd.numpy.random', True)
"""
import numpy as _np

from .lookup import looked_up_in

__getattr__, __dir__ = looked_up_in(_np.random)
