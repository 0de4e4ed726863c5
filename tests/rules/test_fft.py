"""Rules of numpy.fft, checked end to end on functions from real inputs to real results (where
every convention for complex cotangents agrees and central differences apply), plus a
dot-product test of each pullback on complex inputs under autograd's convention.

The complex intermediate values pass only through the fft rules themselves and through
np.real, np.imag and multiplication by a constant."""
import numpy as np
import pytest

from tapegrad import check_grad, gradient, rrule
from tapegrad.tangents import getitem

from _rule_tables import DTYPES, name

FFT = np.fft


def power(z):
    """A real result of a complex array: Σ Re(z)² + 3 Im(z)² (weights unequal, to see both parts)."""
    return np.sum(np.real(z) ** 2 + 3 * np.imag(z) ** 2)


def row(label, fn, shape, f):
    return pytest.param(fn, shape, f, id=f"{fn.__name__} {label}")


#: (rule, input shape, real function of a real input going through the rule)
TABLE = [
    row("even", FFT.fft, (8,), lambda x: power(FFT.fft(x))),
    row("odd", FFT.fft, (7,), lambda x: power(FFT.fft(x))),
    row("pad n=9 ortho", FFT.fft, (7,), lambda x: power(FFT.fft(x, 9, norm="ortho"))),
    row("crop n=4 forward", FFT.fft, (7,), lambda x: power(FFT.fft(x, n=4, norm="forward"))),
    row("axis=0", FFT.fft, (4, 3), lambda x: power(FFT.fft(x, axis=0))),
    row("broadcast batch", FFT.fft, (2, 3, 5), lambda x: power(FFT.fft(x, 6))),
    row("n=6", FFT.ifft, (7,), lambda x: power(FFT.ifft(x, 6))),
    row("ortho axis", FFT.ifft, (3, 4), lambda x: power(FFT.ifft(x, axis=-2, norm="ortho"))),
    row("forward", FFT.ifft, (5,), lambda x: power(FFT.ifft(x, norm="forward"))),
    row("", FFT.fft2, (4, 5), lambda x: power(FFT.fft2(x))),
    row("s crop and pad", FFT.fft2, (4, 5), lambda x: power(FFT.fft2(x, s=(3, 6), norm="ortho"))),
    row("axes", FFT.ifft2, (4, 5), lambda x: power(FFT.ifft2(x, axes=(1, 0)))),
    row("batch", FFT.ifft2, (2, 3, 4), lambda x: power(FFT.ifft2(x, norm="forward"))),
    row("all axes", FFT.fftn, (3, 4, 2), lambda x: power(FFT.fftn(x))),
    row("s axes", FFT.fftn, (4, 5), lambda x: power(FFT.fftn(x, s=(5, 3), axes=(1, 0), norm="ortho"))),
    row("one axis", FFT.ifftn, (4, 5), lambda x: power(FFT.ifftn(x, axes=(0,)))),
    row("s", FFT.ifftn, (4, 5), lambda x: power(FFT.ifftn(x, s=(2, 7), axes=(0, 1)))),
    row("short input n=64", FFT.fft, (3, 2), lambda x: power(FFT.fft(x, 64, axis=0))),
    row("short input n=64 forward", FFT.ifft, (3,), lambda x: power(FFT.ifft(x, 64, norm="forward"))),
    row("kernel s axes ortho", FFT.fft2, (3, 2), lambda x: power(FFT.fft2(x, s=(32, 24), axes=(1, 0), norm="ortho"))),
    row("kernel crop one axis, pad the other", FFT.ifftn, (40, 3), lambda x: power(FFT.ifftn(x, s=(32, 64), axes=(0, 1)))),
    row("even", FFT.rfft, (8,), lambda x: power(FFT.rfft(x))),
    row("odd", FFT.rfft, (7,), lambda x: power(FFT.rfft(x))),
    row("pad n=10 ortho", FFT.rfft, (7,), lambda x: power(FFT.rfft(x, 10, norm="ortho"))),
    row("crop n=5 forward axis=0", FFT.rfft, (7, 2), lambda x: power(FFT.rfft(x, 5, axis=0, norm="forward"))),
    row("", FFT.rfft2, (4, 6), lambda x: power(FFT.rfft2(x))),
    row("s axes", FFT.rfft2, (4, 5), lambda x: power(FFT.rfft2(x, s=(5, 3), axes=(1, 0)))),
    row("", FFT.rfftn, (3, 4, 5), lambda x: power(FFT.rfftn(x, norm="ortho"))),
    row("s", FFT.rfftn, (4, 5), lambda x: power(FFT.rfftn(x, s=(3, 7), axes=(0, 1)))),
    # short inputs padded far: the pullbacks take a few entries of the transpose as matrix products
    row("short input n=64 ortho", FFT.rfft, (3,), lambda x: power(FFT.rfft(x, 64, norm="ortho"))),
    row("short input n=64 forward axis=0", FFT.rfft, (3, 2), lambda x: power(FFT.rfft(x, 64, axis=0, norm="forward"))),
    row("kernel s=(32, 32)", FFT.rfft2, (3, 3), lambda x: power(FFT.rfft2(x, s=(32, 32)))),
    row("kernel s axes", FFT.rfft2, (3, 2), lambda x: power(FFT.rfft2(x, s=(32, 24), axes=(1, 0)))),
    row("kernel batch ortho", FFT.rfftn, (2, 3, 3), lambda x: power(FFT.rfftn(x, s=(16, 16), axes=(1, 2), norm="ortho"))),
    row("crop one axis, pad the other", FFT.rfftn, (40, 3), lambda x: power(FFT.rfftn(x, s=(32, 64), axes=(0, 1)))),
    row("round trip even", FFT.irfft, (8,), lambda x: np.sum(np.sin(FFT.irfft(FFT.rfft(x) * K5)))),
    row("round trip odd", FFT.irfft, (7,), lambda x: np.sum(np.sin(FFT.irfft(FFT.rfft(x), 7)))),
    row("crop spectrum n=9 forward", FFT.irfft, (7,),
        lambda x: np.sum(np.sin(FFT.irfft(FFT.rfft(x, 6) * np.arange(1, 5), 9, norm="forward")))),
    row("full spectrum n=7", FFT.irfft, (7,), lambda x: np.sum(np.sin(FFT.irfft(FFT.fft(x), 7)))),
    row("pad spectrum n=10 ortho", FFT.irfft, (5,), lambda x: np.sum(np.sin(FFT.irfft(FFT.fft(x)[:3], 10, norm="ortho")))),
    row("of a real array", FFT.irfft, (5,), lambda x: np.sum(np.sin(FFT.irfft(x)))),
    row("axis=0", FFT.irfft, (4, 3), lambda x: np.sum(np.sin(FFT.irfft(FFT.fft(x, axis=0), axis=0)))),
    row("", FFT.irfft2, (4, 5), lambda x: np.sum(np.sin(FFT.irfft2(FFT.rfft2(x) * 1.5)))),
    row("s", FFT.irfft2, (4, 5), lambda x: np.sum(np.sin(FFT.irfft2(FFT.fft2(x), s=(3, 6), norm="ortho")))),
    row("s", FFT.irfftn, (4, 5), lambda x: np.sum(np.sin(FFT.irfftn(FFT.fftn(x), s=(3, 7), axes=(0, 1))))),
    row("s, default axes", FFT.irfftn, (2, 4, 5), lambda x: np.sum(np.sin(FFT.irfftn(FFT.fftn(x, axes=(1, 2)), s=(6,), axes=(2,))))),
    row("axes", FFT.irfftn, (4, 5), lambda x: np.sum(np.sin(FFT.irfftn(FFT.fft2(x), axes=(1, 0), norm="forward")))),
    row("", FFT.fftshift, (7,), lambda x: np.sum(FFT.fftshift(x) * np.arange(7.0))),
    row("axes", FFT.fftshift, (4, 5), lambda x: np.sum(FFT.fftshift(x, axes=0) * np.arange(20.0).reshape(4, 5))),
    row("", FFT.ifftshift, (6,), lambda x: np.sum(FFT.ifftshift(x) * np.arange(6.0))),
    row("axes", FFT.ifftshift, (3, 5), lambda x: np.sum(FFT.ifftshift(x, axes=(1,)) * np.arange(15.0).reshape(3, 5))),
]
K5 = np.array([1.0, 0.5 - 2j, 2 + 1j, -1j, 0.25])

EXERCISED = {p.values[0] for p in TABLE}


def real_power(z):
    """Σ Re(z)²: at second order the complex values stay inside the fft rules and np.real."""
    return np.sum(np.real(z) ** 2)


def point(*shape):
    return np.sin(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape))


#: (rule, function to differentiate twice, args at a smooth point)
ORDER2 = [
    (FFT.fft, lambda x: real_power(FFT.fft(x, 7, norm="ortho")), (point(6),)),
    (FFT.ifft, lambda x: real_power(FFT.ifft(x, axis=0)), (point(4, 3),)),
    (FFT.fft2, lambda x: real_power(FFT.fft2(x, s=(3, 5))), (point(4, 4),)),
    (FFT.ifft2, lambda x: real_power(FFT.ifft2(x, norm="forward")), (point(3, 4),)),
    (FFT.fftn, lambda x: real_power(FFT.fftn(x)), (point(2, 3, 2),)),
    (FFT.ifftn, lambda x: real_power(FFT.ifftn(x, axes=(1,))), (point(3, 4),)),
    (FFT.rfft, lambda x: real_power(FFT.rfft(x, 8)), (point(7),)),
    (FFT.rfft2, lambda x: real_power(FFT.rfft2(x)), (point(4, 5),)),
    (FFT.rfft2, lambda x: real_power(FFT.rfft2(x, s=(32, 32))), (point(3, 3),)),
    (FFT.rfftn, lambda x: real_power(FFT.rfftn(x, norm="ortho")), (point(2, 3, 4),)),
    (FFT.irfft, lambda x: np.sum(np.sin(FFT.irfft(FFT.rfft(x) * K5))), (point(8),)),
    (FFT.irfft2, lambda x: np.sum(np.sin(FFT.irfft2(FFT.fft2(x), s=(3, 6)))), (point(4, 5),)),
    (FFT.irfftn, lambda x: np.sum(np.sin(FFT.irfftn(FFT.rfftn(x), axes=(1, 0)))), (point(4, 5),)),
    (FFT.fftshift, lambda x: np.sum(np.sin(FFT.fftshift(x)) * np.arange(5.0)), (point(5),)),
    (FFT.ifftshift, lambda x: np.sum(np.sin(FFT.ifftshift(x, axes=0)) * np.arange(4.0)[:, None]), (point(4, 2),)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=name)
@pytest.mark.parametrize("fn, shape, f", TABLE)
def test_fft_rule(fn, shape, f, dtype, rng):
    """Each fft rule, through a real function of a real input, matches central differences in both modes."""
    check_grad(f, rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("fn, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_fft_second_order(fn, f, args):
    """The pullbacks are fft calls themselves: second derivatives match central differences."""
    check_grad(lambda x: gradient(f, x)[0], *args)


COMPLEX_CALLS = [
    (FFT.fft, (6,), {}), (FFT.fft, (5,), {"n": 7, "norm": "ortho"}), (FFT.ifft, (6,), {"n": 4}),
    (FFT.fft2, (3, 4), {"s": (4, 2)}), (FFT.ifftn, (2, 3, 4), {"axes": (0, 2), "norm": "forward"}),
    (FFT.irfft, (5,), {}), (FFT.irfft, (4,), {"n": 7}), (FFT.irfft, (6,), {"n": 6, "norm": "ortho"}),
    (FFT.irfft2, (3, 4), {}), (FFT.irfftn, (3, 4), {"s": (5, 5), "axes": (0, 1)}),
    (FFT.fft, (3,), {"n": 64, "norm": "ortho"}), (FFT.ifft2, (3, 2), {"s": (32, 40)}),
    (FFT.fftn, (40, 3), {"s": (32, 64), "axes": (0, 1), "norm": "forward"}),
]


@pytest.mark.parametrize("fn, shape, kwargs", COMPLEX_CALLS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_complex_input_cotangent_follows_autograds_convention(fn, shape, kwargs, rng):
    """For a complex input z, the cotangent c satisfies df = Re Σ c dz (c = ∂f/∂Re z - i ∂f/∂Im z),
    checked on random complex directions for f = Re Σ g·fn(z)."""
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    y, back = rrule(fn, z, **kwargs)
    g = rng.standard_normal(y.shape) + (1j * rng.standard_normal(y.shape) if y.dtype.kind == "c" else 0)
    c = getitem(back(g), 1)
    assert c.shape == z.shape and c.dtype.kind == "c"
    v = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    # fn is real-linear, so the directional derivative of f along v is f(v)
    assert np.real(np.sum(g * fn(v, **kwargs))) == pytest.approx(np.real(np.sum(c * v)), rel=1e-10)


def test_fft_power_spectrum_has_the_closed_form_gradient(rng):
    """d/dx Σ|fft(x)|² = 2n x (Parseval: Σ|fft(x)|² = n Σ x²)."""
    x = rng.standard_normal(6)
    (dx,) = gradient(lambda x: np.sum(np.real(FFT.fft(x)) ** 2 + np.imag(FFT.fft(x)) ** 2), x)
    np.testing.assert_allclose(dx, 12 * x, rtol=1e-12)


def test_fft_convolution_gradient_is_correlation(rng):
    """d/dx Σ w · irfft(rfft(x) rfft(k)) is the circular correlation of w with k."""
    x, k, w = rng.standard_normal(8), rng.standard_normal(8), rng.standard_normal(8)
    (dx,) = gradient(lambda x: np.sum(w * FFT.irfft(FFT.rfft(x) * FFT.rfft(k), 8)), x)
    expected = [sum(w[(i + j) % 8] * k[j] for j in range(8)) for i in range(8)]
    np.testing.assert_allclose(dx, expected, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=name)
@pytest.mark.parametrize("shape, kwargs", [
    ((9, 9), {"s": (256, 256), "axes": (0, 1)}), ((2, 5, 7), {"s": (64, 48), "axes": (2, 1), "norm": "ortho"}),
    ((40, 3), {"s": (32, 64), "axes": (0, 1), "norm": "forward"}),
], ids=str)
@pytest.mark.parametrize("fn", [FFT.rfftn, FFT.fftn, FFT.ifftn], ids=name)
def test_pullback_of_a_padded_input_matches_the_transform(fn, shape, kwargs, dtype, rng):
    """The pullback of rfftn (fftn, ifftn) over a short input padded with zeros (s=), taken as
    matrix products for the entries of the input only, agrees with the transform it stands for
    (irfftn of the weighted conjugate cotangent; fftn, ifftn) to rounding, keeps the input's
    dtype, and a compiled gradient gives the same."""
    from tapegrad import compiled_grad, grad
    from tapegrad.rules.fft import _OPPOSITE, _fit, _half_weights, _prunes

    x = rng.standard_normal(shape).astype(dtype)
    y, back = rrule(fn, x, **kwargs)
    g = rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape)
    dx = getitem(back(g), 1)
    axes = tuple(a % x.ndim for a in kwargs["axes"])
    assert _prunes(y.shape, axes, kwargs["s"], tuple(x.shape[a] for a in axes))  # matrix products taken
    if fn is FFT.rfftn:
        w = np.reshape(_half_weights(kwargs["s"][-1], np.float64, True), (-1,) + (1,) * (x.ndim - 1 - axes[-1]))
        full = FFT.irfftn(np.conj(g) * w, s=kwargs["s"], axes=axes, norm=_OPPOSITE[kwargs.get("norm")])
    else:
        full = np.real(fn(g, axes=axes, norm=kwargs.get("norm")))
    expected = _fit(full, axes, [x.shape[a] for a in axes])
    assert dx.shape == x.shape and dx.dtype == dtype
    np.testing.assert_allclose(dx, expected, rtol=0, atol=(1e-5 if dtype == np.float32 else 1e-12) * np.max(np.abs(expected)))

    def f(x):
        return power(fn(x, **kwargs))

    _, (_, dx) = grad(f, x)
    np.testing.assert_allclose(compiled_grad(f)(x)[1][1], dx, rtol=1e-6 if dtype == np.float32 else 1e-13)



@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=name)
@pytest.mark.parametrize("shape, axes, s, norm", [
    ((256, 256), (0, 1), None, None), ((7, 9), (0, 1), None, "ortho"), ((3, 4, 6), (0, 1, 2), None, "forward"),
    ((5, 6, 8), (2, 0), None, None), ((6, 5), (0, 1), (8, 5), None), ((6, 5), (0, 1), (4, 9), "ortho"),
    ((9,), (0,), (12,), None),
], ids=str)
def test_rfftn_and_irfftn_made_in_place_give_numpys_bits(shape, axes, s, norm, dtype, rng):
    """The rules' rfftn and irfftn with their complex transforms made in place (one array of the
    spectrum's size rather than one per axis) equal numpy's rfftn and irfftn bit for bit, also
    where s= pads or cuts an axis (there the transform makes its own array)."""
    from tapegrad.rules.fft import _irfftn_from, _rfftn_into

    x = rng.standard_normal(shape).astype(dtype)
    lengths = s or tuple(shape[a] for a in axes)
    z = _rfftn_into(x, axes, lengths, norm)
    want = FFT.rfftn(x, s=lengths, axes=axes, norm=norm)
    assert z.dtype == want.dtype and np.array_equal(z, want)
    back = FFT.irfftn(want, s=lengths, axes=axes, norm=norm)
    got = _irfftn_from(z.copy(), axes, lengths, norm)
    assert got.dtype == back.dtype and np.array_equal(got, back)


def test_w7p_gradient_makes_one_spectrum_array_per_transform(rng, monkeypatch):
    """W7p's gradient (a full-size kernel, rfft2 of both factors): each transform of the
    forward and backward program makes one array of its spectrum's or image's size, in place
    along the other axis, and the gradient equals the hand-written one (correlation with the
    conjugate spectra) to rounding."""
    from tapegrad import grad

    image, kernel, target = (rng.standard_normal((32, 32)) for _ in range(3))
    made = []
    for fname in ("fft", "ifft", "rfft", "irfft"):
        def counted(*args, _fn=getattr(FFT, fname), **kwargs):
            out = _fn(*args, **kwargs)
            made.append(kwargs.get("out") is None)
            return out
        monkeypatch.setattr(FFT, fname, counted)

    def loss(image, kernel):
        spectrum = FFT.rfft2(image) * FFT.rfft2(kernel)
        return np.mean((FFT.irfft2(spectrum, s=image.shape) - target) ** 2)

    _, (_, di, dk) = grad(loss, image, kernel)
    monkeypatch.undo()
    # the transforms the rules call (the forward irfft2 is numpy's own: its input is the user's):
    # a new array and one in place for each rfft2 of the forward pass and for irfft2's pullback,
    # one in place and a new real array for each of the two pullbacks of rfft2
    assert made == [True, False] * 3 + [False, True] * 2
    fi, fk = FFT.rfft2(image), FFT.rfft2(kernel)
    residual = FFT.irfft2(fi * fk, s=image.shape) - target
    fr = FFT.rfft2(residual * (2.0 / residual.size))
    np.testing.assert_allclose(di, FFT.irfft2(fr * np.conj(fk), s=image.shape), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dk, FFT.irfft2(fr * np.conj(fi), s=image.shape), rtol=1e-12, atol=1e-15)
