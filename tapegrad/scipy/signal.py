"""scipy.signal functions that traced values can go through, with their gradients.

scipy converts its inputs with ``np.asarray``, which a traced value refuses: inside a function
being differentiated call these instead (same names, signatures and results). On plain values
each calls scipy itself (scipy's results, bit for bit). On traced or dual values:

- ``convolve`` is one op, differentiated by its rule (``tapegrad.rules.signal``);
  ``correlate``, ``fftconvolve``, ``oaconvolve``, ``convolve2d`` and ``correlate2d`` are that
  op, the correlations with the second input flipped (and conjugated), ``correlate2d``'s
  'same' result cropped as scipy crops it.
- ``lfilter`` is one op, `lfilter_core` (the filter from rest, along one axis), whose rule runs
  the cotangent backward through the same filter (``tapegrad.rules.signal_filters``); an initial
  state ``zi`` adds the filter's response to it (`lfilter_core` of ``[1]`` and the state), and
  the final state ``zf`` is read off the last inputs and outputs, so that every argument is
  differentiable. ``sosfilt`` is ``lfilter`` section by section, ``filtfilt`` (method 'pad')
  ``lfilter`` forward and backward from scipy's initial states.
- ``savgol_filter`` is linear in x: the interior a `convolve` with scipy's own
  ``savgol_coeffs``, the edges (mode 'interp') scipy's polynomial fit, a fixed matrix applied to
  the first and last window (scipy's own filter of the identity), the other modes the signal
  extended by indexing.

Examples
--------
>>> import numpy as np, tapegrad
>>> from tapegrad.scipy.signal import convolve
>>> k = np.array([1.0, 2.0])
>>> tapegrad.gradient(lambda x: np.sum(convolve(x, k)), np.ones(3))[0]  # each x meets Σk
array([3., 3., 3.])
"""
from __future__ import annotations

import numpy as np
import scipy.signal as _ss

from ..context import primitive
from ..errors import TapegradError, user_location
from ..hints import register_replacement
from ..pytree import Boxed, find_nested

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d", "lfilter", "sosfilt", "filtfilt",
           "savgol_filter", "lfilter_zi"]


def traced_among(*values) -> bool:
    """True when a traced or dual value is among `values` (inside tuples and lists too)."""
    return find_nested(list(values), Boxed) is not None


def plain_value(v):
    """The plain value a traced or dual value stands for."""
    while isinstance(v, Boxed):
        v = v._val
    return v


def _refuse(call, option, advice):
    raise TapegradError(f"tapegrad.scipy.signal.{call} with {option} on traced values at {user_location()} "
                        f"has no derivative: {advice}")


def _vector(v):
    """Filter coefficients as a 1-d array (a list may hold traced values: np.array records them)."""
    return np.atleast_1d(np.array(v) if isinstance(v, (list, tuple)) else v)


def _flip_conj(v):
    v = np.flip(v)
    return np.conj(v) if np.iscomplexobj(plain_value(v)) else v


# --- convolutions and correlations: convolve's op ---


@primitive(traceable=False)
def convolve(in1, in2, mode="full", method="auto"):
    """`scipy.signal.convolve` that traced values can go through: both inputs are differentiable,
    in any number of dimensions and each mode ('full', 'valid', 'same').

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import convolve
    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), mode="same")
    array([1. , 2.5, 4. ])
    """
    return _ss.convolve(in1, in2, mode=mode, method=method)


def correlate(in1, in2, mode="full", method="auto"):
    """`scipy.signal.correlate` that traced values can go through: ``convolve(in1, flip(conj(in2)))``.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.signal import correlate
    >>> tapegrad.gradient(lambda k: correlate(np.array([1.0, 2.0, 3.0]), k, "valid")[0], np.ones(2))[0]
    array([1., 2.])
    """
    if not traced_among(in1, in2):
        return _ss.correlate(in1, in2, mode=mode, method=method)
    return convolve(in1, _flip_conj(in2), mode=mode, method=method)


def fftconvolve(in1, in2, mode="full", axes=None):
    """`scipy.signal.fftconvolve` that traced values can go through (`convolve`'s op, method 'fft').

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import fftconvolve
    >>> fftconvolve(np.array([1.0, 1.0]), np.array([1.0, 2.0])).round(12)
    array([1., 3., 2.])
    """
    return _by_fft(_ss.fftconvolve, in1, in2, mode, axes)


def oaconvolve(in1, in2, mode="full", axes=None):
    """`scipy.signal.oaconvolve` that traced values can go through (`convolve`'s op: the same
    convolution, by overlap-add on plain values).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import oaconvolve
    >>> oaconvolve(np.array([1.0, 1.0]), np.array([1.0, 2.0])).round(12)
    array([1., 3., 2.])
    """
    return _by_fft(_ss.oaconvolve, in1, in2, mode, axes)


def _by_fft(scipy_fn, in1, in2, mode, axes):
    """fftconvolve's and oaconvolve's body: scipy's on plain values, `convolve`'s op by FFT on
    traced ones (over every axis: ``axes`` is refused there)."""
    if not traced_among(in1, in2):
        return scipy_fn(in1, in2, mode=mode, axes=axes)
    if axes is not None:
        _refuse(scipy_fn.__name__, f"axes={axes!r}", "convolve over every axis (axes=None)")
    return convolve(in1, in2, mode=mode, method="fft")


def _check_2d(call, in1, in2, boundary, fillvalue):
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{call} inputs must both be 2-D arrays")  # scipy's words
    if boundary not in ("fill", "pad") or np.any(plain_value(fillvalue) != 0):
        _refuse(call, f"boundary={boundary!r}, fillvalue={plain_value(fillvalue)!r}",
                "only boundary='fill' with fillvalue=0 is differentiated; extend the array yourself "
                "(np.pad with mode 'wrap' or 'symmetric') and use mode='valid'")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """`scipy.signal.convolve2d` that traced values can go through: `convolve`'s op (boundary
    'fill' with fillvalue 0; the other boundaries raise on traced values).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import convolve2d
    >>> convolve2d(np.eye(2), np.ones((1, 2)))
    array([[1., 1., 0.],
           [0., 1., 1.]])
    """
    if not traced_among(in1, in2, fillvalue):
        return _ss.convolve2d(in1, in2, mode=mode, boundary=boundary, fillvalue=fillvalue)
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode=mode, method="direct")


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """`scipy.signal.correlate2d` that traced values can go through: `convolve` with `in2` flipped
    (and conjugated), its 'same' result cropped as scipy's correlate2d crops it.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import correlate2d
    >>> correlate2d(np.eye(2), np.ones((1, 2)))
    array([[1., 1., 0.],
           [0., 1., 1.]])
    """
    if not traced_among(in1, in2, fillvalue):
        return _ss.correlate2d(in1, in2, mode=mode, boundary=boundary, fillvalue=fillvalue)
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    kernel = _flip_conj(in2)
    if mode != "same":
        return convolve(in1, kernel, mode=mode, method="direct")
    # correlate2d's 'same' window starts at s // 2 of the full result, convolve's at (s - 1) // 2
    full = convolve(in1, kernel, mode="full", method="direct")
    (m, n), (p, q) = np.shape(in1), np.shape(in2)
    return full[p // 2:p // 2 + m, q // 2:q // 2 + n]


# --- IIR filters ---


@primitive(traceable=False)
def lfilter_core(b, a, x, axis=-1):
    """``scipy.signal.lfilter(b, a, x, axis)`` from rest (no initial state): the op that
    `lfilter` records, differentiable in `b`, `a` and `x` (its rule is in
    ``tapegrad.rules.signal_filters``).

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import lfilter_core
    >>> lfilter_core([1.0], [1.0, -0.5], np.array([1.0, 0.0, 0.0]))
    array([1.  , 0.5 , 0.25])
    """
    return _ss.lfilter(b, a, x, axis=axis)


def _zf(b, a, x, y, zi, k_order):
    """The final state of scipy's transposed direct form II after x (its output y), from the
    normalized coefficients: z_k = Σ_{m>k} (b_m x[N-m+k] - a_m y[N-m+k]) + zi[k+N] (terms at a
    negative index, or past the state, left out). x, y and zi have time along the last axis."""
    n = np.shape(x)[-1]
    parts = []
    for k in range(k_order):
        terms = []
        for m in range(k + 1, k_order + 1):
            i = n - m + k
            if i < 0:
                continue
            if m < np.shape(b)[0]:
                terms.append(b[m] * x[..., i])
            if m < np.shape(a)[0]:
                terms.append(-(a[m] * y[..., i]))
        if zi is not None and k + n < k_order:
            terms.append(zi[..., k + n])
        total = terms[0] if terms else 0.0 * y[..., 0]
        for t in terms[1:]:
            total = total + t
        parts.append(total)
    return np.stack(parts, axis=-1)


def lfilter(b, a, x, axis=-1, zi=None):
    """`scipy.signal.lfilter` that traced values can go through: ``y``, or ``(y, zf)`` given an
    initial state ``zi``, differentiable in `b`, `a`, `x` and `zi`.

    The gradient in x is the same filter run backward over the reversed cotangent; those in b
    and a are the cotangent run backward through 1/A, correlated with x and with -y.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.signal import lfilter
    >>> x = np.array([1.0, 0.0, 0.0])
    >>> lfilter([1.0], [1.0, -0.5], x)  # y[n] = x[n] + y[n-1] / 2
    array([1.  , 0.5 , 0.25])
    >>> tapegrad.gradient(lambda a1: np.sum(lfilter([1.0], [1.0, a1], x)), -0.5)[0]  # d(1 - a₁ + a₁²)/da₁
    -2.0
    """
    if not traced_among(b, a, x, zi):
        return _ss.lfilter(b, a, x, axis=axis, zi=zi)
    b, a = _vector(b), _vector(a)
    y = lfilter_core(b, a, x, axis)
    if zi is None:
        return y
    k_order = max(np.shape(a)[0], np.shape(b)[0]) - 1
    xl, yl, zil = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1), np.moveaxis(zi, axis, -1)
    n = np.shape(xl)[-1]
    an, bn = a / a[0], b / a[0]
    # the response to the initial state is 1/A of the state, as an input at the first samples
    start = zil[..., :n] if n < k_order else np.concatenate(
        [zil, np.zeros(np.shape(zil)[:-1] + (n - k_order,), dtype=plain_value(zil).dtype)], axis=-1)
    yl = yl + lfilter_core(np.ones(1), an, start, -1)
    zf = _zf(bn, an, xl, yl, zil, k_order)
    return np.moveaxis(yl, -1, axis), np.moveaxis(zf, -1, axis)


def sosfilt(sos, x, axis=-1, zi=None):
    """`scipy.signal.sosfilt` that traced values can go through: `lfilter` section by section.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import sosfilt
    >>> sosfilt(np.array([[1.0, 0.0, 0.0, 1.0, -0.5, 0.0]]), np.array([1.0, 0.0, 0.0]))
    array([1.  , 0.5 , 0.25])
    """
    if not traced_among(sos, x, zi):
        return _ss.sosfilt(sos, x, axis=axis, zi=zi)
    finals = []
    for i in range(np.shape(sos)[0]):
        if zi is None:
            x = lfilter(sos[i, :3], sos[i, 3:], x, axis)
        else:
            x, zf = lfilter(sos[i, :3], sos[i, 3:], x, axis, zi[i])
            finals.append(zf)
    return x if zi is None else (x, np.stack(finals))


def _odd_ext(x, n):
    """scipy's odd extension by n samples at each end of the last axis."""
    left = 2 * x[..., :1] - x[..., n:0:-1]
    right = 2 * x[..., -1:] - x[..., -2:-n - 2:-1]
    return np.concatenate([left, x, right], axis=-1)


def _even_ext(x, n):
    return np.concatenate([x[..., n:0:-1], x, x[..., -2:-n - 2:-1]], axis=-1)


def _const_ext(x, n):
    ones = np.ones(n)
    return np.concatenate([x[..., :1] * ones, x, x[..., -1:] * ones], axis=-1)


def filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None):
    """`scipy.signal.filtfilt` that traced values can go through (method 'pad'): the signal
    extended as scipy extends it, `lfilter` forward and backward from scipy's initial states
    (``lfilter_zi(b, a)`` times the first sample, which `lfilter_zi` computes again from traced
    coefficients), differentiable in `b`, `a` and `x`.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import filtfilt
    >>> filtfilt([0.5, 0.5], [1.0], np.arange(8.0)).round(12)
    array([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    if not traced_among(b, a, x):
        return _ss.filtfilt(b, a, x, axis=axis, padtype=padtype, padlen=padlen, method=method, irlen=irlen)
    if method != "pad":
        _refuse("filtfilt", f"method={method!r}", "use method='pad'")
    b, a = _vector(b), _vector(a)
    ntaps = max(np.shape(a)[0], np.shape(b)[0])
    edge = 3 * ntaps if padlen is None else padlen
    if padtype is None:
        edge = 0
    xl = np.moveaxis(x, axis, -1)
    if np.shape(xl)[-1] <= edge:
        raise ValueError(f"The length of the input vector x must be greater than padlen, which is {edge}.")
    ext = {"odd": _odd_ext, "even": _even_ext, "constant": _const_ext}.get(padtype) if edge else None
    if edge and ext is None:
        raise ValueError(f"Unknown value '{padtype}' given to padtype.  padtype must be 'even', 'odd', "
                         f"'constant', or None.")
    ext_x = ext(xl, edge) if ext else xl
    zi = _lfilter_zi_traced(b, a)
    shape = (1,) * (np.ndim(ext_x) - 1) + (-1,)
    y, _ = lfilter(b, a, ext_x, -1, np.reshape(zi, shape) * ext_x[..., :1])
    y = np.flip(y, -1)
    y, _ = lfilter(b, a, y, -1, np.reshape(zi, shape) * y[..., :1])
    y = np.flip(y, -1)
    if edge:
        y = y[..., edge:-edge]
    return np.moveaxis(y, -1, axis)


def _lfilter_zi_traced(b, a):
    """scipy's lfilter_zi written with differentiable numpy calls: the steady state of the filter
    for a unit step, (I - Cᵀ) zi = b[1:] - a[1:] b[0] with C the companion matrix of a."""
    b, a = b / a[0], a / a[0]
    k = max(np.shape(a)[0], np.shape(b)[0])
    if np.shape(a)[0] < k:
        a = np.concatenate([a, np.zeros(k - np.shape(a)[0])])
    if np.shape(b)[0] < k:
        b = np.concatenate([b, np.zeros(k - np.shape(b)[0])])
    if k == 1:
        return np.zeros(0)
    companion = np.concatenate([np.reshape(-a[1:], (1, k - 1)), np.eye(k - 2, k - 1)], axis=0)
    return np.linalg.solve(np.eye(k - 1) - np.transpose(companion), b[1:] - a[1:] * b[0])


def lfilter_zi(b, a):
    """`scipy.signal.lfilter_zi`: scipy's own on plain values; on traced coefficients the same
    steady state, (I - Cᵀ) zi = b[1:] - a[1:] b[0] with C the companion matrix of a, solved with
    differentiable calls.

    Examples
    --------
    >>> import numpy as np
    >>> from tapegrad.scipy.signal import lfilter_zi
    >>> lfilter_zi([1.0], [1.0, -0.5])  # a unit step settles at y = 2
    array([1.])
    """
    if not traced_among(b, a):
        return _ss.lfilter_zi(b, a)
    return _lfilter_zi_traced(_vector(b), _vector(a))


# --- Savitzky-Golay ---


def savgol_filter(x, window_length, polyorder, deriv=0, delta=1.0, axis=-1, mode="interp", cval=0.0):
    """`scipy.signal.savgol_filter` that traced values can go through: linear in x (the
    coefficients are scipy's ``savgol_coeffs``), every mode, odd window lengths.

    Examples
    --------
    >>> import numpy as np, tapegrad
    >>> from tapegrad.scipy.signal import savgol_filter
    >>> x = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    >>> np.allclose(tapegrad.trace(lambda x: savgol_filter(x, 3, 1), x)[0], savgol_filter(x, 3, 1))
    True
    """
    if not traced_among(x, cval):
        return _ss.savgol_filter(x, window_length, polyorder, deriv=deriv, delta=delta, axis=axis, mode=mode,
                                 cval=cval)
    if window_length % 2 == 0:
        _refuse("savgol_filter", f"window_length={window_length}", "use an odd window length")
    xl = np.moveaxis(x, axis, -1)
    n, half = np.shape(xl)[-1], window_length // 2
    coeffs = _ss.savgol_coeffs(window_length, polyorder, deriv=deriv, delta=delta)
    if mode == "interp":
        if window_length > n:
            raise ValueError("If mode is 'interp', window_length must be less than or equal to the size of x.")
        # the fit over one window is a fixed linear map: scipy's own filter of the identity
        fit = _ss.savgol_filter(np.eye(window_length), window_length, polyorder, deriv=deriv, delta=delta,
                                axis=0, mode="interp")
        inner = convolve(xl, np.reshape(coeffs, (1,) * (np.ndim(xl) - 1) + (-1,)), mode="valid")
        left = np.matmul(xl[..., :window_length], np.transpose(fit[:half]))
        right = np.matmul(xl[..., n - window_length:], np.transpose(fit[window_length - half:]))
        y = np.concatenate([left, inner, right], axis=-1)
    else:
        if mode == "constant":
            pad = np.zeros(np.shape(xl)[:-1] + (half,)) + cval
            ext = np.concatenate([pad, xl, pad], axis=-1)
        elif mode in ("mirror", "nearest", "wrap"):
            idx = np.pad(np.arange(n), half, mode={"mirror": "reflect", "nearest": "edge", "wrap": "wrap"}[mode])
            ext = xl[..., idx]
        else:
            raise ValueError("mode must be 'mirror', 'constant', 'nearest' 'wrap' or 'interp'.")
        y = convolve(ext, np.reshape(coeffs, (1,) * (np.ndim(xl) - 1) + (-1,)), mode="valid")
    return np.moveaxis(y, -1, axis)


for _name in __all__:
    register_replacement(f"scipy.signal.{_name}", f"tapegrad.scipy.signal.{_name}")
del _name
