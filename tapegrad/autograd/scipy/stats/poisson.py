"""autograd's ``scipy.stats.poisson`` module: each name is that of `tapegrad.scipy.stats.poisson`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.poisson, name)
