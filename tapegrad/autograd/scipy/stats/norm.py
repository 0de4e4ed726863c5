"""autograd's ``scipy.stats.norm`` module: each name is that of `tapegrad.scipy.stats.norm`,
differentiable where tapegrad writes it (``pdf``, ``logpdf``, ``cdf``, ...)."""
from ....scipy import stats as _stats


def __getattr__(name):
    return getattr(_stats.norm, name)
