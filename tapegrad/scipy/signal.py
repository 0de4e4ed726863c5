"""scipy.signal functions that traced values can go through, with their gradients.

scipy converts its inputs with ``np.asarray``, which a traced value refuses: inside a function
being differentiated call `convolve` from here instead (same name, signature and results).
Its rule is in ``tapegrad.rules.signal``.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.scipy.signal import convolve
>>> k = np.array([1.0, 2.0])
>>> tapegrad.gradient(lambda x: np.sum(convolve(x, k)), np.ones(3))[0]  # each x meets Σk
array([3., 3., 3.])
"""
from __future__ import annotations

import scipy.signal as _ss

from ..context import primitive
from ..hints import register_replacement

__all__ = ["convolve"]


@primitive(traceable=False)
def convolve(in1, in2, mode="full", method="auto"):
    """`scipy.signal.convolve` that traced values can go through: both inputs are differentiable,
    in any number of dimensions and each mode ('full', 'valid', 'same').

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import convolve
    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), mode="same")
    array([1. , 2.5, 4. ])
    """
    return _ss.convolve(in1, in2, mode=mode, method=method)


for _name in __all__:
    register_replacement(f"scipy.signal.{_name}", f"tapegrad.scipy.signal.{_name}")
del _name
