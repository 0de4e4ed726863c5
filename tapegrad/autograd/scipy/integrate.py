"""``tapegrad.autograd.scipy.integrate.odeint`` is `tapegrad.scipy.integrate.odeint`:
gradients in `y0`, the time points and `args`, by the adjoint method.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad
>>> from tapegrad.autograd.scipy.integrate import odeint
>>> decay = lambda y, t, k: -k * y
>>> round(float(grad(lambda k: odeint(decay, 1.0, np.array([0.0, 1.0]), (k,))[-1, 0])(0.5)), 4)  # -e^{-k}
-0.6065
"""
from ...scipy.integrate import odeint

__all__ = ["odeint"]
