"""autograd's ``scipy.stats.gamma`` module: each name is that of `tapegrad.scipy.stats.gamma`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.gamma, name)
