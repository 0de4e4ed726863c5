"""autograd's ``scipy.stats.chi2`` module: each name is that of `tapegrad.scipy.stats.chi2`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.chi2, name)
