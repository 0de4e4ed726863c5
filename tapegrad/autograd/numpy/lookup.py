"""A module that is one of numpy's, each name looked up in it when it is used (so that the
stand-ins a trace puts in numpy's namespace are found): autograd's ``numpy.fft``, ``.linalg``
and ``.random``.

(``tapegrad.autograd.numpy.fft``'s docstring shows one in use.)
"""

__all__ = ["looked_up_in"]


def looked_up_in(namespace):
    """``(__getattr__, __dir__)`` of a module whose names are those of `namespace` (PEP 562)."""

    def __getattr__(name):
        return getattr(namespace, name)

    def __dir__():
        return dir(namespace)

    return __getattr__, __dir__
