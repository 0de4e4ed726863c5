"""scipy.special functions that traced values can go through, with their gradients.

scipy's `logsumexp`, `softmax`, `log_softmax`, `polygamma` and `multigammaln` are plain
Python functions that convert their inputs with ``np.asarray``, which a traced value refuses,
so inside a function being differentiated call these instead of scipy's: same names, same
signatures, same results. On plain values each calls scipy; on traced or dual values it is
recorded as one primitive and differentiated by its rule (in ``tapegrad.rules.logsumexp``,
``tapegrad.rules.special`` and ``tapegrad.rules.incomplete``). The other scipy.special
functions are ufuncs and work on traced values as they are; every other name of this module
is scipy.special's own (``tapegrad.scipy.special.gammainc is scipy.special.gammainc``), so
code ported from ``autograd.scipy.special`` can import everything from here.

The ufuncs with rules (``docs/rules.md`` lists each with its formula), by family:

- gamma and beta: ``gamma``, ``gammaln``, ``loggamma`` (complex too), ``digamma``/``psi``,
  ``rgamma``, ``beta``, ``betaln``, ``binom`` and ``poch`` (real arguments), ``gammainc``,
  ``gammaincc``, ``betainc`` (their shapes by quadrature, first order);
- elementary: ``log1p``, ``expm1``, ``exp2``, ``exp10``, ``cbrt``, ``cosm1``, ``powm1``,
  ``exprel``, ``sindg``, ``cosdg``, ``tandg``, ``cotdg``, ``radian``, ``boxcox``,
  ``boxcox1p``, ``inv_boxcox``, ``inv_boxcox1p`` (``round`` is piecewise constant);
- logistic, entropies and losses: ``expit``, ``logit``, ``log_expit``, ``xlogy``,
  ``xlog1py``, ``entr``, ``rel_entr``, ``kl_div``, ``huber``, ``pseudo_huber``;
- error functions and integrals: ``erf``, ``erfc``, ``erfcx``, ``erfinv``, ``erfcinv``,
  ``erfi``, ``dawsn``, ``wofz`` (complex), ``voigt_profile``, ``owens_t``, ``expi``,
  ``exp1``, ``expn`` (in x), ``spence``;
- the normal distribution and others, in their variable: ``ndtr``, ``log_ndtr``, ``ndtri``,
  ``stdtr``, ``chdtr``, ``chdtrc``, ``gdtr``, ``gdtrc`` (and the rate), ``pdtr``, ``pdtrc``,
  ``bdtr``, ``bdtrc``, ``nbdtr``, ``nbdtrc``, ``fdtr``, ``fdtrc`` (a shape parameter raises
  NoRuleError naming the gammainc or betainc form to write instead; counts are integers);
- Bessel functions: ``jv``, ``yv``, ``iv``, ``ive``, ``kv``, ``jve``, ``yve``, ``kve`` (the
  order by quadrature, first order), ``yn``, ``kn`` (in x), ``j0``, ``j1``, ``y0``, ``y1``,
  ``i0``, ``i1``, ``i0e``, ``i1e``, ``k0``, ``k1``, ``k0e``, ``k1e``, and the Hankel functions
  ``hankel1``, ``hankel2``, ``hankel1e``, ``hankel2e`` (complex values);
- elliptic integrals: ``ellipk``, ``ellipkm1``, ``ellipe``, ``ellipkinc``, ``ellipeinc``,
  ``agm``.

Any other ufunc of scipy.special (``zetac``, whose derivative scipy cannot compute, the
hypergeometric and Mathieu functions, ...) raises NoRuleError in a gradient.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.scipy.special import logsumexp
>>> _, tape = tapegrad.trace(lambda a: logsumexp(a, axis=0), np.zeros(2))
>>> print(tape)
Tape
  inp %1::function lambda
  inp %2::float64[2]   # a
  %3 = logsumexp(%2, axis=0)::float64
"""
from __future__ import annotations

import operator

import scipy.special as _sp

from ..context import primitive
from ..hints import register_replacement

__all__ = ["logsumexp", "softmax", "log_softmax", "polygamma", "multigammaln"]


def _recorded(fn):
    """scipy's `fn` as one primitive, named as the replacement here that calls it.

    The tape shows ``logsumexp(...)``, and errors, the rule listing and generated source name
    ``tapegrad.scipy.special.logsumexp``: the function the user imports, which takes the same
    arguments (scipy's own would refuse a traced value).
    """
    recorded = primitive(fn, traceable=False)
    recorded.__module__ = __name__
    # not scipy's docstring, whose examples would run as this module's doctests
    recorded.__doc__ = f"``scipy.special.{fn.__name__}`` as one primitive: what `{fn.__name__}` records."
    return recorded


# What `logsumexp`, `softmax` and `log_softmax` record, once their arguments are put in the
# form the rules take; the rules are registered on these.
logsumexp_op = _recorded(_sp.logsumexp)
softmax_op = _recorded(_sp.softmax)
log_softmax_op = _recorded(_sp.log_softmax)


def _static_axis(axis):
    """An axis as plain ints: a traced int (an axis captured by the traced function) is read
    once, as the shapes it indexes are fixed while tracing."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return operator.index(axis)


def _along(recorded, x, axis):
    """``recorded(x, axis=axis)`` with a static axis, given by name only when there is one."""
    axis = _static_axis(axis)
    return recorded(x) if axis is None else recorded(x, axis=axis)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """`scipy.special.logsumexp` that traced values can go through (same arguments and results).

    Both `a` and the weights `b` receive gradients; with `return_sign`, the sign does not.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.special import logsumexp
    >>> tapegrad.gradient(lambda a: logsumexp(a), np.log(np.array([1.0, 3.0])))[0]  # softmax
    array([0.25, 0.75])
    """
    axis = _static_axis(axis)
    # b goes by position (with axis before it), so that a traced b receives its gradient
    args = (a,) if b is None else (a, axis, b)
    kwargs = {"axis": axis} if b is None and axis is not None else {}
    if keepdims:
        kwargs["keepdims"] = keepdims
    if return_sign:
        kwargs["return_sign"] = return_sign
    return logsumexp_op(*args, **kwargs)


def softmax(x, axis=None):
    """`scipy.special.softmax` that traced values can go through.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.special import softmax
    >>> softmax(np.log(np.array([1.0, 3.0])))
    array([0.25, 0.75])
    """
    return _along(softmax_op, x, axis)


def log_softmax(x, axis=None):
    """`scipy.special.log_softmax` that traced values can go through.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.special import log_softmax
    >>> np.exp(log_softmax(np.log(np.array([1.0, 3.0]))))
    array([0.25, 0.75])
    """
    return _along(log_softmax_op, x, axis)


@primitive(traceable=False)
def polygamma(n, x):
    """`scipy.special.polygamma` that traced values can go through (derivative with respect to `x`).

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.special import polygamma
    >>> round(tapegrad.gradient(lambda x: polygamma(0, x), 1.0)[0], 12)  # ψ'(1) = π²/6
    1.644934066848
    """
    return _sp.polygamma(n, x)


@primitive(traceable=False)
def multigammaln(a, d):
    """`scipy.special.multigammaln` that traced values can go through (derivative with respect to `a`).

    The dimension `d` is an integer. d/da log Γ_d(a) = Σⱼ ψ(a - j/2) for j = 0 .. d-1.

    Examples
    --------
    >>> import tapegrad
    >>> from tapegrad.scipy.special import multigammaln
    >>> round(tapegrad.gradient(lambda a: multigammaln(a, 1), 1.0)[0], 12)  # ψ(1) = -γ
    -0.577215664902
    """
    return _sp.multigammaln(a, d)


def __getattr__(name):
    # the ufuncs of scipy.special see traced values as they are: this module hands them out
    try:
        return getattr(_sp, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


for _name in __all__:
    register_replacement(f"scipy.special.{_name}", f"tapegrad.scipy.special.{_name}")
del _name
