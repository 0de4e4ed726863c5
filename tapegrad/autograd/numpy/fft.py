"""``tapegrad.autograd.numpy.fft`` is ``numpy.fft``, each name looked up when it is used.

Examples
--------
>>> import numpy
>>> import tapegrad.autograd.numpy.fft as fft
>>> fft.__name__, getattr(fft, "rfft") is numpy.fft.rfft
('tapegrad.autograd.numpy.fft', True)
"""
import numpy as _np

from .lookup import looked_up_in

__getattr__, __dir__ = looked_up_in(_np.fft)
