"""tapegrad.scipy.signal's correlations, IIR filters (lfilter, sosfilt, filtfilt, lfilter_zi) and
savgol_filter: scipy's results on plain values, the same values traced, and gradients that match
closed forms and central differences (forward and reverse, second order)."""
import numpy as np
import pytest
import scipy.signal

import tapegrad
from tapegrad import TapegradError, check_grad, gradient
from tapegrad.scipy import signal as tsg
from tapegrad.scipy.signal import lfilter_core

B = np.array([0.5, 0.3, 0.1])
A = np.array([1.2, -0.4, 0.1])  # a[0] ≠ 1: scipy normalizes by it
SOS = scipy.signal.butter(4, 0.3, output="sos")


def sig(rng, *shape):
    return rng.standard_normal(shape)


def _sos(num, den):
    """An sos array from its numerators and the denominators after their leading 1."""
    return np.concatenate([num, np.ones((np.shape(num)[0], 1)), den], axis=1)


#: (function, input maker): the traced value equals scipy's and the gradient of Σ f² matches
#: central differences in both modes
TABLE = [
    pytest.param(lambda x, k: tsg.correlate(x, k), lambda r: (sig(r, 7), sig(r, 3)), id="correlate"),
    pytest.param(lambda x, k: tsg.correlate(x, k, "same", "fft"), lambda r: (sig(r, 6), sig(r, 4)), id="correlate same"),
    pytest.param(lambda x, k: tsg.correlate(x, k, "valid"), lambda r: (sig(r, 3), sig(r, 5)), id="correlate valid swapped"),
    pytest.param(lambda x, k: tsg.fftconvolve(x, k, "valid"), lambda r: (sig(r, 7), sig(r, 3)), id="fftconvolve"),
    pytest.param(lambda x, k: tsg.oaconvolve(x, k, "same"), lambda r: (sig(r, 4, 5), sig(r, 2, 2)), id="oaconvolve 2-d"),
    pytest.param(lambda x, k: tsg.convolve2d(x, k, "same"), lambda r: (sig(r, 5, 4), sig(r, 2, 3)), id="convolve2d same"),
    pytest.param(lambda x, k: tsg.correlate2d(x, k), lambda r: (sig(r, 4, 4), sig(r, 2, 3)), id="correlate2d full"),
    pytest.param(lambda x, k: tsg.correlate2d(x, k, "same"), lambda r: (sig(r, 5, 4), sig(r, 2, 3)),
                 id="correlate2d same"),
    pytest.param(lambda x, k: tsg.correlate2d(x, k, "valid"), lambda r: (sig(r, 5, 4), sig(r, 2, 3)),
                 id="correlate2d valid"),
    pytest.param(lambda b, a, x: tsg.lfilter(b, a, x), lambda r: (B, A, sig(r, 10)), id="lfilter"),
    pytest.param(lambda b, x: tsg.lfilter(b, 1.0, x), lambda r: (B, sig(r, 6)), id="lfilter FIR"),
    pytest.param(lambda b, a, x: tsg.lfilter(b, a, x, axis=0), lambda r: (B[:2], A, sig(r, 8, 2)), id="lfilter axis 0"),
    pytest.param(lambda b, a, x, zi: tsg.lfilter(b, a, x, zi=zi)[0], lambda r: (B, A, sig(r, 8), sig(r, 2)),
                 id="lfilter zi: y"),
    pytest.param(lambda b, a, x, zi: tsg.lfilter(b, a, x, zi=zi)[1], lambda r: (B, A, sig(r, 8), sig(r, 2)),
                 id="lfilter zi: zf"),
    pytest.param(lambda b, a, x, zi: tsg.lfilter(b, a, x, -1, zi)[1], lambda r: (B, A[:2], sig(r, 2, 1), sig(r, 2, 2)),
                 id="lfilter zf, fewer samples than state"),
    pytest.param(lambda num, den, x: tsg.sosfilt(_sos(num, den), x), lambda r: (SOS[:, :3], SOS[:, 4:], sig(r, 12)),
                 id="sosfilt"),
    pytest.param(lambda num, den, x, zi: tsg.sosfilt(_sos(num, den), x, zi=zi)[1],
                 lambda r: (SOS[:2, :3], SOS[:2, 4:], sig(r, 6), sig(r, 2, 2)), id="sosfilt zi: zf"),
    pytest.param(lambda b, a, x: tsg.filtfilt(b, a, x), lambda r: (B, A, sig(r, 12)), id="filtfilt"),
    pytest.param(lambda b, a, x: tsg.filtfilt(b, a, x, padtype="even", padlen=3), lambda r: (B, A, sig(r, 2, 9)),
                 id="filtfilt even"),
    pytest.param(lambda b, a, x: tsg.filtfilt(b, a, x, axis=0, padtype="constant"), lambda r: (B, A, sig(r, 10, 2)),
                 id="filtfilt constant axis 0"),
    pytest.param(lambda b, a, x: tsg.filtfilt(b, a, x, padtype=None), lambda r: (B, A, sig(r, 7)), id="filtfilt no pad"),
    pytest.param(lambda b, a: tsg.lfilter_zi(b, a), lambda r: (B, A), id="lfilter_zi"),
    pytest.param(lambda x: tsg.savgol_filter(x, 5, 2), lambda r: (sig(r, 9),), id="savgol interp"),
    pytest.param(lambda x: tsg.savgol_filter(x, 5, 3, deriv=1, delta=0.5, axis=0), lambda r: (sig(r, 7, 2),),
                 id="savgol deriv axis 0"),
    pytest.param(lambda x: tsg.savgol_filter(x, 5, 2, mode="mirror"), lambda r: (sig(r, 8),), id="savgol mirror"),
    pytest.param(lambda x: tsg.savgol_filter(x, 3, 1, mode="nearest"), lambda r: (sig(r, 6),), id="savgol nearest"),
    pytest.param(lambda x: tsg.savgol_filter(x, 5, 2, mode="wrap"), lambda r: (sig(r, 7),), id="savgol wrap"),
    pytest.param(lambda x, c: tsg.savgol_filter(x, 5, 2, mode="constant", cval=c), lambda r: (sig(r, 7), 1.5),
                 id="savgol constant"),
]

EXERCISED = {lfilter_core}

#: (rule, function to differentiate twice, args at a smooth point): few, the conformance layer
#: runs each through every entry point
_rng = np.random.default_rng(5)
ORDER2 = [
    (lfilter_core, lambda b, a, x: np.sum(tsg.lfilter(b, a, x) ** 2) / 2, (B, A, sig(_rng, 6))),
    (lfilter_core, lambda a, x: np.sum(tsg.filtfilt(B, a, x) ** 2) / 2, (A, sig(_rng, 10))),
]


@pytest.mark.parametrize("f, make", TABLE)
def test_value_and_gradient(f, make, rng):
    """Traced, each function gives scipy's value; the gradient of Σ f² matches central differences
    in forward and reverse mode."""
    args = make(rng)
    np.testing.assert_allclose(tapegrad.trace(f, *args)[0], f(*args), rtol=1e-10, atol=1e-12)
    check_grad(lambda *xs: np.sum(f(*xs) ** 2), *args)


@pytest.mark.parametrize("rule, f, args", ORDER2, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(rule, f, args):
    """lfilter's pullback filters again: second derivatives match central differences."""
    check_grad(lambda *xs: gradient(f, *xs)[-1], *args)


CALLS = [
    ("correlate", lambda x: (x, x[:3], "same")), ("fftconvolve", lambda x: (x, x[:3])),
    ("oaconvolve", lambda x: (x, x[:3])), ("convolve2d", lambda x: (np.outer(x, x), np.ones((2, 2)), "same")),
    ("correlate2d", lambda x: (np.outer(x, x), np.ones((2, 2)), "same")), ("lfilter", lambda x: (B, A, x)),
    ("lfilter", lambda x: (B, A, x, -1, x[:2])), ("sosfilt", lambda x: (SOS, x)), ("filtfilt", lambda x: (B, A, x)),
    ("savgol_filter", lambda x: (x, 5, 2)), ("lfilter_zi", lambda x: (B, A)),
]


@pytest.mark.parametrize("name, make", CALLS, ids=[c[0] for c in CALLS])
def test_plain_values_are_scipys_own(name, make, rng):
    """On plain values each replacement returns what scipy.signal returns, bit for bit."""
    args = make(rng.standard_normal(20))
    ours, theirs = getattr(tsg, name)(*args), getattr(scipy.signal, name)(*args)
    for a, b in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
        np.testing.assert_array_equal(a, b)


def test_lfilter_gradient_in_x_is_the_filter_run_backward(rng):
    """For y = lfilter(b, a, x), x̄ = flip(lfilter(b, a, flip(ȳ)))."""
    x, dy = rng.standard_normal(9), rng.standard_normal(9)
    g = gradient(lambda x: np.sum(dy * tsg.lfilter(B, A, x)), x)[0]
    np.testing.assert_allclose(g, scipy.signal.lfilter(B, A, dy[::-1])[::-1], rtol=1e-12)


def test_lfilter_gradient_in_a_closed_form():
    """y = lfilter([1], [1, a₁], δ) = (1, -a₁, a₁², ...), so d Σy / da₁ = -1 + 2a₁ - 3a₁² at three samples."""
    g = gradient(lambda a1: np.sum(tsg.lfilter([1.0], [1.0, a1], np.array([1.0, 0.0, 0.0]))), 0.5)[0]
    assert g == pytest.approx(-1 + 2 * 0.5)


def test_lfilter_is_one_op():
    """The tape of lfilter without an initial state shows one op, lfilter_core, with its rule."""
    tape = tapegrad.trace(lambda x: tsg.lfilter(np.array([1.0]), np.array([1.0, -0.5]), x), np.ones(3))[1]
    assert str(tape) == ("Tape\n"
                         "  inp %1::function lambda\n"
                         "  inp %2::float64[3]   # x\n"
                         "  %3 = lfilter_core([1.], [ 1. , -0.5], %2, -1)::float64[3]")


def test_savgol_of_a_line_is_the_line():
    """A Savitzky-Golay filter of order ≥ 1 keeps a straight line, edges included: its Jacobian
    maps the line to itself, so the gradient of Σ c·y is Σ over the rows of c times the map."""
    x = np.arange(7.0)
    np.testing.assert_allclose(tapegrad.trace(lambda x: tsg.savgol_filter(x, 5, 1), x)[0], x, atol=1e-12)
    jac = tapegrad.jacobian(lambda x: tsg.savgol_filter(x, 5, 1), x)
    np.testing.assert_allclose(jac @ x, x, atol=1e-12)


REFUSED = [
    (lambda x: tsg.fftconvolve(x, x, axes=0), "fftconvolve with axes=0"),
    (lambda x: tsg.oaconvolve(x, x, axes=0), "oaconvolve with axes=0"),
    (lambda x: tsg.convolve2d(np.outer(x, x), np.ones((2, 2)), boundary="wrap"), "convolve2d with boundary='wrap'"),
    (lambda x: tsg.correlate2d(np.outer(x, x), np.ones((2, 2)), fillvalue=1.0), "correlate2d with boundary='fill', fillvalue=1.0"),
    (lambda x: tsg.filtfilt(B, A, x, method="gust"), "filtfilt with method='gust'"),
    (lambda x: tsg.savgol_filter(x, 4, 2), "savgol_filter with window_length=4"),
]


@pytest.mark.parametrize("f, what", REFUSED, ids=[w for _, w in REFUSED])
def test_options_without_derivative_are_refused(f, what):
    """An option with no derivative raises on traced values, naming the function and option."""
    with pytest.raises(TapegradError, match=f"tapegrad.scipy.signal.{what}.* on traced values at .*test_signal_filters"):
        gradient(lambda x: np.sum(f(x)), np.linspace(0.1, 1.0, 20))


@pytest.mark.parametrize("name", ["lfilter", "savgol_filter", "correlate", "filtfilt"])
def test_scipys_own_function_names_the_replacement(name):
    """scipy.signal's own function, given a traced value, says which replacement to use."""
    calls = {"lfilter": lambda x: scipy.signal.lfilter(B, A, x), "savgol_filter": lambda x: scipy.signal.savgol_filter(x, 5, 2),
             "correlate": lambda x: scipy.signal.correlate(x, x), "filtfilt": lambda x: scipy.signal.filtfilt(B, A, x)}
    with pytest.raises(Exception, match=f"scipy.signal.{name} cannot see traced values: use "
                                        f"tapegrad.scipy.signal.{name} instead"):
        gradient(lambda x: np.sum(calls[name](x)), np.linspace(0.1, 1.0, 20))
