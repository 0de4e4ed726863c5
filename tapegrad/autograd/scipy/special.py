"""``tapegrad.autograd.scipy.special`` is `tapegrad.scipy.special`: its `logsumexp`,
`softmax`, `log_softmax`, `polygamma`, `multigammaln`, and scipy.special's own ufuncs.

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad
>>> from tapegrad.autograd.scipy.special import logsumexp, gammaln
>>> grad(lambda x: logsumexp(x) + np.sum(gammaln(x)))(np.array([1.0, 1.0]))
array([-0.07721566, -0.07721566])
"""
from ...scipy import special as _special


def __getattr__(name):
    return getattr(_special, name)
