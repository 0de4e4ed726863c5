"""Rules for numpy.fft: the complex, real-to-complex and complex-to-real transforms and the shifts.

Every transform is linear, so its pullback is its transpose applied to the cotangent. Complex
cotangents follow autograd's convention: for a real result ``f`` of a complex ``z``, the
cotangent of ``z`` is ``∂f/∂Re z - i ∂f/∂Im z`` (the gradient of ``|z|²`` at ``1+2j`` is
``2-4j``), so the pullback of a complex-linear map ``A`` is its plain transpose ``Aᵀ``, not
its conjugate transpose. The DFT matrix is symmetric, hence:

- ``fft``/``ifft`` (and the 2-d and n-d forms): the pullback is the same transform, with the same
  ``norm``, of the cotangent; then the padding or cropping done by ``n``/``s`` is undone.
- ``irfft``: it reads the real and imaginary parts of ``X[k]`` with the weight ``c[k]`` (1 at
  ``k = 0`` and, for even ``n``, at ``k = n/2``, whose imaginary parts it ignores; 2 elsewhere),
  so its pullback is ``c[k] · ifft(g)[k]`` for the first ``n//2 + 1`` entries, with the same norm;
  for a real ``g`` that is ``c[k] · conj(rfft(g)[k])`` with the opposite norm (an unscaled
  transform pairs with a 1/n one, "ortho" with itself), which costs half as much.
- ``rfft``: the half spectrum is the first ``n//2 + 1`` rows of the full one, so the pullback is
  the real part of ``fft`` of the cotangent padded with zeros (the input is real); by the same
  identity read backwards that is ``irfft(conj(ȳ) / c)`` with the opposite norm, a real transform.
  When the input is short and padded far with zeros (``s=``/``n=``: a small kernel convolved
  with an image), only its few entries of that transform are needed: ``Re Σₖ ȳ[k] e^(-2πi k·n/N)``
  for them, one matrix product per axis, costs a fraction of the transform.
- ``fftshift``/``ifftshift`` move elements: the pullback is the opposite shift.

Forward rules are written out too: each transform applied to the input's tangent. Every rule
here is written for complex values (the convention above).
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from ..registry import rrule, stand_in, whole
from ..tangents import NO_TANGENT, ZERO
from ._shapes import bind, cast_like, dtype_of, no_tangents

_FFT = np.fft


def _norm_axes(axes, ndim):
    return tuple(operator.index(a) % ndim for a in axes)


#: the types of the arguments a plan is cached by (a list, an out= array or a traced value is
#: not: its plan is worked out each time)
_PLAIN = (type(None), int, str, np.integer)


def _plain(v):
    return isinstance(v, _PLAIN) or type(v) is tuple and all(isinstance(k, _PLAIN) for k in v)


def _plan(fn, args, kwargs, one_d, inverse_real=False):
    """The transform's axes, output lengths along them, norm and the input's lengths along
    them, as numpy resolves them; the same call on the same shape is looked up."""
    shape, rest = np.shape(args[0]), args[1:]
    if all(map(_plain, rest)) and all(map(_plain, kwargs.values())):
        return _cached_plan(fn, shape, rest, tuple(kwargs.items()), one_d, inverse_real)
    return _resolve(fn, shape, rest, kwargs, one_d, inverse_real)


@functools.lru_cache(maxsize=256)
def _cached_plan(fn, shape, rest, items, one_d, inverse_real):
    return _resolve(fn, shape, rest, dict(items), one_d, inverse_real)


def _resolve(fn, shape, rest, kwargs, one_d, inverse_real):
    # (the array alone and keywords, as calls mostly are: the keywords are the binding, and a
    # name numpy does not take is refused by the call itself)
    b = kwargs if not rest else bind(fn, (None, *rest), kwargs)
    ndim = len(shape)
    norm = b.get("norm")
    if one_d:
        axes = _norm_axes((b.get("axis", -1),), ndim)
        n = b.get("n")
        lengths = None if n is None else (operator.index(n),)
    else:
        s, axes = b.get("s"), b.get("axes", None if fn in (_FFT.fftn, _FFT.ifftn, _FFT.rfftn, _FFT.irfftn)
                                        else (-2, -1))
        if axes is None:
            axes = range(ndim) if s is None else range(ndim - len(s), ndim)
        axes = _norm_axes(tuple(axes), ndim)
        lengths = None if s is None else tuple(operator.index(k) for k in s)
    if lengths is None:
        lengths = tuple(shape[a] for a in axes)
        if inverse_real:
            lengths = lengths[:-1] + (2 * (lengths[-1] - 1),)
    else:  # -1 in s means the input's own length
        lengths = tuple(shape[a] if k == -1 else k for a, k in zip(axes, lengths))
    return axes, lengths, norm, tuple(shape[a] for a in axes)


def _fit(a, axes, lengths):
    """`a` cropped or padded with zeros along `axes` to `lengths` (what n= and s= do to an input)."""
    shape = np.shape(a)
    if all(shape[ax] == n for ax, n in zip(axes, lengths)):
        return a
    index = [slice(None)] * len(shape)
    pads = [(0, 0)] * len(shape)
    for ax, n in zip(axes, lengths):
        if n < shape[ax]:
            index[ax] = slice(0, n)
        elif n > shape[ax]:
            pads[ax] = (0, n - shape[ax])
    if any(s != slice(None) for s in index):
        a = a[tuple(index)]
    if any(p != (0, 0) for p in pads):
        a = np.pad(a, pads)
    return a


#: the norm whose scale is the other one's transpose partner: an unscaled transform pairs with
#: a 1/n one ("backward" with "forward"), "ortho" with itself
_OPPOSITE = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _low(dy):
    """float32 for a single-precision cotangent, else float64: the dtype of the weights."""
    return np.float32 if dtype_of(dy) in (np.float32, np.complex64) else np.float64


@functools.lru_cache(maxsize=128)
def _half_weights(n, dtype, inverse=False):
    """c[k] of irfft: 1 at k = 0 and at the Nyquist entry of an even length, 2 elsewhere (or
    1/c[k]); one read-only array per length, dtype and kind."""
    c = np.full(n // 2 + 1, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    if inverse:
        c = 1 / c
    c = c.astype(dtype)
    c.flags.writeable = False
    return c


@functools.lru_cache(maxsize=128)
def _conj_row(n, dtype, inverse):
    """The weights of `_half_weights` as factors of (real, imaginary) pairs, the imaginary
    ones negated: [c0, -c0, c1, -c1, ...], which conjugates and weights a complex row at once."""
    c = _half_weights(n, dtype, inverse)
    row = np.empty(2 * len(c), dtype=dtype)
    row[0::2], row[1::2] = c, -c
    row.flags.writeable = False
    return row


#: the dtype of the (real, imaginary) pairs of a complex dtype
_PAIRS = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def _conj_weighted(z, n, axis, inverse=False, scratch=False):
    """conj(z) · c[k] along `axis` (or conj(z) / c[k] if `inverse`), for a transform of length n.

    On a plain C-contiguous array weighted along its last axis, in one pass over its (real,
    imaginary) pairs, in `z` itself when it is `scratch` (a result of the pullback's own): the
    large spectra of image-sized transforms notice. Otherwise (a traced value at second order,
    another axis) conjugate and multiply, as numpy calls a tracer records.
    """
    if (type(z) is np.ndarray and axis == z.ndim - 1 and z.dtype in _PAIRS
            and z.flags.c_contiguous and z.size):
        pairs = _PAIRS[z.dtype]
        row = _conj_row(n, pairs, inverse)
        flat = z.view(pairs)
        if scratch:
            np.multiply(flat, row, out=flat)
            return z
        return np.multiply(flat, row).view(z.dtype)
    w = _along(_half_weights(n, _low(z), inverse), axis, np.ndim(z))
    if type(z) is not np.ndarray:  # traced (second order): numpy calls the tracer records
        return np.conjugate(z) * w
    out = np.conjugate(z, out=z) if scratch else np.conjugate(z)
    return np.multiply(out, w, out=out)


def _rfftn_into(x, axes, lengths, norm):
    """``rfftn(x, s=lengths, axes=axes, norm=norm)`` of a plain array, the same bits, with the
    complex transforms of the other axes made in place in the real transform's output (as
    numpy's own ``out=`` does): one array of the spectrum's size where numpy makes one per axis.
    Each large array is a fresh mapping with glibc's default malloc, page-faulted in as it is
    first written, so an image-sized gradient notices (benchmarks/README.md, W7p)."""
    z = _FFT.rfft(x, n=lengths[-1], axis=axes[-1], norm=norm)
    for a, n in zip(reversed(axes[:-1]), reversed(lengths[:-1])):
        z = _FFT.fft(z, n=n, axis=a, norm=norm, out=z if z.shape[a] == n else None)
    return z


def _irfftn_from(z, axes, lengths, norm):
    """``irfftn(z, s=lengths, axes=axes, norm=norm)`` of a spectrum of the pullback's own (a
    plain array nobody else holds), the same bits, its complex transforms made in place in it."""
    for a, n in zip(axes[:-1], lengths[:-1]):
        z = _FFT.ifft(z, n=n, axis=a, norm=norm, out=z if z.shape[a] == n else None)
    return _FFT.irfft(z, n=lengths[-1], axis=axes[-1], norm=norm)


def _along(v, axis, ndim):
    """A 1-d array `v` shaped to broadcast along `axis` of an ndim-dimensional array."""
    return np.reshape(v, (-1,) + (1,) * (ndim - 1 - axis))


# --- pruned transposes: a few outputs of a transform, as matrix products ---


#: the most entries of one cached matrix of `_dft_columns` (1 MiB of complex128): a longer one
#: costs more to make than the transform it would save, so `_prunes` does not choose it
_MAX_COLUMNS = 1 << 16


@functools.lru_cache(maxsize=32)
def _dft_columns(length, k, m, scale, sign=-1):
    """The (k, m) matrix scale · exp(sign 2πi j n / length), j < k, n < m, complex128, read-only
    (j n is reduced modulo the length first, so that the angles stay exact)."""
    jn = np.arange(k)[:, None] * np.arange(m) % length
    e = np.exp((sign * 2j * np.pi / length) * jn)
    if scale != 1:
        e *= scale
    e.flags.writeable = False
    return e


def _stages(shape, axes, crops):
    """(axis, crop) in the order `_pruned_transpose` contracts them, the multiply-adds it takes
    and the largest matrix it uses: the last axis first, where the array is contiguous."""
    order, size, work, entries = [], math.prod(shape), 0, 0
    for a, m in reversed(list(zip(axes, crops))):
        work += size * m
        entries = max(entries, shape[a] * m)
        size = size // shape[a] * m if shape[a] else 0
        order.append((a, m))
    return tuple(order), work, entries


def _pruned_transpose(dy, order, lengths_of, scale, sign=-1):
    """Σ_k dy[k] exp(sign 2πi k·n / L) · scale at the first `crop` n along each axis, in
    complex128: the transpose of a transform (fftn, ifftn with sign +1, or rfftn on its half
    spectrum) restricted to the entries of a zero-padded input. One matrix product per axis,
    each on what the last left: when the crops are short, a small fraction of a transform's work."""
    t = dy
    for a, m in order:
        e = _dft_columns(lengths_of[a], t.shape[a], m, scale, sign)
        scale = 1
        t = t @ e if a == t.ndim - 1 else np.moveaxis(np.moveaxis(t, a, -1) @ e, -1, a)
    return t


@functools.lru_cache(maxsize=256)
def _prunes(shape, axes, lengths, sizes):
    """The contraction order when `_pruned_transpose` of a cotangent of this shape (the input's
    lengths `sizes` along the axes) costs less than the transform it replaces, else None: its
    multiply-adds at most 2/3 of the transform's n log2 n (near 1 the two break even; the
    measurement is in benchmarks/README.md)."""
    crops = tuple(min(m, n) for m, n in zip(sizes, lengths))
    if min(shape, default=1) == 0 or crops == lengths:
        return None
    order, work, entries = _stages(shape, axes, crops)
    if entries > _MAX_COLUMNS:
        return None
    full = math.prod(lengths) * (math.prod(shape) // math.prod(shape[a] for a in axes))
    return order if 3 * work <= 2 * full * math.log2(max(math.prod(lengths), 2)) else None


# --- what explain prints, and the forward rules: every transform is linear, so the tangent
# goes through it as the input does ---


def _linear_frule(fn):
    def linear_frule(dargs, x, *args, **kwargs):
        dx = dargs[0]
        return fn(x, *args, **kwargs), (ZERO if dx is ZERO else fn(dx, *args, **kwargs))

    linear_frule.__name__ = linear_frule.__qualname__ = f"{fn.__name__}_frule"
    return linear_frule


def _norm_note(values, kwargs):
    """", norm='ortho'" when a transform was called with a norm: the pullback uses the same one."""
    norm = kwargs["norm"] if "norm" in kwargs else values[3] if len(values) > 3 else None
    return f", norm={norm!r}" if isinstance(norm, str) and norm != "backward" else ""


def _fit_note(values, kwargs):
    """Where n= or s= cut or padded the input, the pullback undoes it."""
    n = kwargs.get("n", kwargs.get("s", values[1] if len(values) > 1 else None))
    return "" if n is None else ", cut or zero-padded back to the shape of {a[0]}"


def _complex_fft(name):
    """fft and its kin: the DFT matrix is symmetric, so the transpose is the same transform."""
    def templates(names, values, kwargs):
        return [f"{name}({{dy}}{_norm_note(values, kwargs)}) (the DFT matrix is symmetric: Fᵀ = F)"
                + _fit_note(values, kwargs), None]
    return whole(templates)


def _real_fft(name):
    """rfft: the half spectrum is the first n//2 + 1 rows of the full one."""
    def templates(names, values, kwargs):
        return [f"Re {name}({{dy}} zero-padded to the full spectrum{_norm_note(values, kwargs)})"
                + _fit_note(values, kwargs), None]
    return whole(templates)


def _inverse_real_fft(name):
    """irfft reads each entry of the half spectrum twice (with its conjugate), except k = 0 and n/2."""
    def templates(names, values, kwargs):
        return [f"c·{name}({{dy}}{_norm_note(values, kwargs)}) on the half spectrum, "
                "c = 1 at k = 0 and at k = n/2 (even n), else 2" + _fit_note(values, kwargs), None]
    return whole(templates)


# --- complex to complex ---


def _scale_sign(same, norm, lengths):
    """The scale and the sign of the exponent of the transform `same` (fftn: -1, ifftn: +1)
    with this norm, over these lengths."""
    n = math.prod(lengths)
    inverse = same is _FFT.ifftn
    scale = {"ortho": 1 / math.sqrt(n), "forward": 1 if inverse else 1 / n}.get(norm, 1 / n if inverse else 1)
    return scale, (1 if inverse else -1)


def _c2c_rule(fn, same, one_d):
    """The rule of a complex transform `fn`; `same` is its n-d form, which the pullback calls."""

    def rule(x, *args, **kwargs):
        axes, lengths, norm, sizes = _plan(fn, (x, *args), kwargs, one_d)
        y = fn(x, *args, **kwargs)
        order = _prunes(np.shape(y), axes, lengths, sizes)  # a short input padded far: see rfft
        x = stand_in(x)  # only its dtype is needed: a large input is freed with the user's code

        def pullback(dy):
            if order is not None and type(dy) is np.ndarray:
                dx = _pruned_transpose(dy, order, dict(zip(axes, lengths)), *_scale_sign(same, norm, lengths))
                dx = _fit(dx, axes, sizes)
            else:
                dx = _fit(same(dy, axes=axes, norm=norm), axes, sizes)
            return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

        pullback.__name__ = pullback.__qualname__ = f"{fn.__name__}_pullback"
        return y, pullback

    rule.__name__ = rule.__qualname__ = f"{fn.__name__}_rrule"
    rule.__doc__ = f"numpy.fft.{fn.__name__}: its pullback is numpy.fft.{same.__name__} of the cotangent, same norm."
    return rule


for _fn, _same, _one_d in [
    (_FFT.fft, _FFT.fftn, True), (_FFT.ifft, _FFT.ifftn, True),
    (_FFT.fft2, _FFT.fftn, False), (_FFT.ifft2, _FFT.ifftn, False),
    (_FFT.fftn, _FFT.fftn, False), (_FFT.ifftn, _FFT.ifftn, False),
]:
    rrule(_fn, complex=True, forward=_linear_frule(_fn), formula=_complex_fft(_fn.__name__))(
        _c2c_rule(_fn, _same, _one_d))


# --- real to complex ---


def _r2c_rule(fn, one_d):
    def rule(x, *args, **kwargs):
        axes, lengths, norm, sizes = _plan(fn, (x, *args), kwargs, one_d)
        last, n = axes[-1], lengths[-1]
        if not one_d and type(x) is np.ndarray and len(args) < 4 and "out" not in kwargs:
            y = _rfftn_into(x, axes, lengths, norm)  # (numpy's rfftn, one array fewer)
        else:
            y = fn(x, *args, **kwargs)
        # a short input padded with zeros (an image-sized transform of a small kernel): its
        # gradient is a few entries of the transpose, cheaper as matrix products
        order = _prunes(np.shape(y), axes, lengths, sizes)
        x = stand_in(x)  # only its dtype is needed

        def pullback(dy):
            if order is not None and type(dy) is np.ndarray:
                dx = _pruned_transpose(dy, order, dict(zip(axes, lengths)), *_scale_sign(_FFT.fftn, norm, lengths))
                dx = np.ascontiguousarray(dx.real)
            else:
                # Re(fftn of dy padded to the full spectrum), computed as the real transform
                # irfftn(conj(dy) / c) with the opposite norm (see the module docstring)
                z = _conj_weighted(dy, n, last, inverse=True)
                if type(z) is np.ndarray and z.dtype.kind == "c":  # (a new array: its transforms can be made in it)
                    dx = _irfftn_from(z, axes, lengths, _OPPOSITE[norm])
                else:
                    dx = _FFT.irfftn(z, s=lengths, axes=axes, norm=_OPPOSITE[norm])
            return NO_TANGENT, cast_like(_fit(dx, axes, sizes), x), *no_tangents(args)

        pullback.__name__ = pullback.__qualname__ = f"{fn.__name__}_pullback"
        return y, pullback

    rule.__name__ = rule.__qualname__ = f"{fn.__name__}_rrule"
    rule.__doc__ = f"numpy.fft.{fn.__name__}: the pullback is irfftn of the conjugate cotangent over c[k]."
    return rule


for _fn, _one_d in [(_FFT.rfft, True), (_FFT.rfft2, False), (_FFT.rfftn, False)]:
    rrule(_fn, complex=True, forward=_linear_frule(_fn), formula=_real_fft(_fn.__name__[1:]))(
        _r2c_rule(_fn, _one_d))


# --- complex to real ---


def _c2r_rule(fn, one_d):
    def rule(x, *args, **kwargs):
        axes, lengths, norm, sizes = _plan(fn, (x, *args), kwargs, one_d, inverse_real=True)
        last, n = axes[-1], lengths[-1]
        y = fn(x, *args, **kwargs)
        x = stand_in(x)  # only its dtype is needed (a product of spectra, freed after the call)

        def pullback(dy):
            # c[k] · ifftn(g)[k] on the first n//2 + 1 rows; for a real g that is
            # c[k] · conj(rfftn(g)[k]) with the opposite norm (see the module docstring)
            if type(dy) is np.ndarray:
                z = _rfftn_into(dy, axes, tuple(dy.shape[a] for a in axes), _OPPOSITE[norm])
            else:
                z = _FFT.rfftn(dy, axes=axes, norm=_OPPOSITE[norm])
            z = _conj_weighted(z, n, last, scratch=True)
            dx = _fit(z, axes, sizes)
            return NO_TANGENT, cast_like(dx, x), *no_tangents(args)

        pullback.__name__ = pullback.__qualname__ = f"{fn.__name__}_pullback"
        return y, pullback

    rule.__name__ = rule.__qualname__ = f"{fn.__name__}_rrule"
    rule.__doc__ = f"numpy.fft.{fn.__name__}: the pullback is c[k] times the conjugate of rfftn of the cotangent."
    return rule


for _fn, _one_d in [(_FFT.irfft, True), (_FFT.irfft2, False), (_FFT.irfftn, False)]:
    rrule(_fn, complex=True, forward=_linear_frule(_fn), formula=_inverse_real_fft("i" + _fn.__name__[2:]))(
        _c2r_rule(_fn, _one_d))


# --- shifts ---


@rrule(_FFT.fftshift, complex=True, forward=_linear_frule(_FFT.fftshift),
       formula=whole("ifftshift({dy}) (the opposite shift)", None))
def fftshift_rrule(x, *args, **kwargs):
    """numpy.fft.fftshift: the pullback is ifftshift of the cotangent along the same axes."""
    axes = bind(_FFT.fftshift, (x, *args), kwargs).get("axes")

    def fftshift_pullback(dy):
        return NO_TANGENT, _FFT.ifftshift(dy, axes=axes), *no_tangents(args)

    return _FFT.fftshift(x, *args, **kwargs), fftshift_pullback


@rrule(_FFT.ifftshift, complex=True, forward=_linear_frule(_FFT.ifftshift),
       formula=whole("fftshift({dy}) (the opposite shift)", None))
def ifftshift_rrule(x, *args, **kwargs):
    """numpy.fft.ifftshift: the pullback is fftshift of the cotangent along the same axes."""
    axes = bind(_FFT.ifftshift, (x, *args), kwargs).get("axes")

    def ifftshift_pullback(dy):
        return NO_TANGENT, _FFT.fftshift(dy, axes=axes), *no_tangents(args)

    return _FFT.ifftshift(x, *args, **kwargs), ifftshift_pullback


del _fn, _same, _one_d
