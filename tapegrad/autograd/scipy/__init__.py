"""autograd's ``scipy``: `special`, `stats` (each distribution a module, as in autograd),
`linalg`, `signal`, `integrate`, `misc`, over `tapegrad.scipy`.

Examples
--------
>>> import numpy as np
>>> import tapegrad.autograd.scipy.stats.multivariate_normal as mvn
>>> from tapegrad.autograd import grad
>>> grad(lambda m: mvn.logpdf(np.zeros(2), m, np.eye(2)))(np.array([1.0, 2.0]))
array([-1., -2.])
"""
from . import integrate, linalg, misc, signal, special, stats  # noqa: F401
