"""``tapegrad.autograd.scipy.linalg``: `tapegrad.scipy.linalg`'s functions (`solve_triangular`,
`cho_factor`, `cho_solve`, `cholesky`, `expm`, `sqrtm`, `solve_sylvester`, ...), then numpy.linalg's
for the names both libraries have (`inv`, `det`, `eigh`, ...), then scipy.linalg's own (which
take plain values only: a traced value raises an error naming the replacement).

Examples
--------
>>> import numpy as np
>>> from tapegrad.autograd import grad
>>> import tapegrad.autograd.scipy.linalg as spla
>>> grad(lambda a: spla.solve_triangular(np.array([[a, 0.0], [1.0, 2.0]]), np.ones(2), lower=True)[0])(2.0)
-0.25
"""
import numpy as _np
import scipy.linalg as _scipy_linalg

from ...scipy import linalg as _linalg


def __getattr__(name):
    for home in (_linalg, _np.linalg, _scipy_linalg):
        if name in getattr(home, "__all__", ()) or (home is not _linalg and hasattr(home, name)):
            return getattr(home, name)
    raise AttributeError(f"module 'tapegrad.autograd.scipy.linalg' has no attribute {name!r}")
