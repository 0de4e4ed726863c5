"""A module that is one of numpy's, each name looked up in it when it is used (so that the
stand-ins a trace puts in numpy's namespace are found): autograd's ``numpy.fft``, ``.linalg``
and ``.random``.

Examples
--------
>>> import numpy
>>> import tapegrad.autograd.numpy.fft as fft
>>> fft.__name__, getattr(fft, "rfft") is numpy.fft.rfft
('tapegrad.autograd.numpy.fft', True)
"""

__all__ = ["looked_up_in"]


def looked_up_in(namespace):
    """``(__getattr__, __dir__)`` of a module whose names are those of `namespace` (PEP 562)."""

    def __getattr__(name):
        return getattr(namespace, name)

    def __dir__():
        return dir(namespace)

    return __getattr__, __dir__
