"""autograd's ``scipy.stats``: each distribution a module (``import
tapegrad.autograd.scipy.stats.multivariate_normal as mvn``) whose functions are those of
`tapegrad.scipy.stats`' distribution of that name.

Examples
--------
>>> from tapegrad.autograd.scipy.stats import norm
>>> from tapegrad.autograd import grad
>>> grad(norm.logpdf, 1)(1.0, 0.0, 2.0)  # (x - μ) / σ²
0.25
"""
from . import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t  # noqa: F401
