"""autograd's ``scipy.stats.multivariate_normal`` module: each name is that of `tapegrad.scipy.stats.multivariate_normal`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.multivariate_normal, name)
