"""autograd's ``scipy.stats.beta`` module: each name is that of `tapegrad.scipy.stats.beta`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.beta, name)
