"""autograd's ``scipy.stats.t`` module: each name is that of `tapegrad.scipy.stats.t`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.t, name)
