"""autograd's ``scipy.stats.dirichlet`` module: each name is that of `tapegrad.scipy.stats.dirichlet`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.dirichlet, name)
