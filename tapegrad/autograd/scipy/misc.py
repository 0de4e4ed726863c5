"""autograd's old ``scipy.misc``: `logsumexp` (now in `special`).

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd.scipy.misc import logsumexp
>>> float(logsumexp(np.zeros(2)))  # log 2
0.6931471805599453
"""
from ...scipy.special import logsumexp

__all__ = ["logsumexp"]
