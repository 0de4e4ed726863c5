"""Writes through views follow numpy: for every view-making function, a write into the view
changes the base exactly as numpy changes it, in value and gradient, traced, compiled and
replayed; read-only views raise as numpy does; copies do not write through."""
import numpy as np
import pytest

import tapegrad
from tapegrad import StaleViewError, check_grad, grad, trace

from conftest import assert_as_numpy

# W weights the result so that every entry of x has its own share of the gradient
W = np.arange(1.0, 25.0).reshape(4, 6) / 10


#: (name, the view of a (4, 6) array) for every function that numpy answers with a view
VIEW_MAKERS = [
    ("basic index", lambda x: x[1:, ::2]),
    ("split", lambda x: np.split(x, 2)[1]),
    ("array_split", lambda x: np.array_split(x, 4, axis=1)[2]),
    ("hsplit", lambda x: np.hsplit(x, 3)[1]),
    ("vsplit", lambda x: np.vsplit(x, 2)[0]),
    ("dsplit", lambda x: np.dsplit(x.reshape(4, 3, 2), 2)[1]),
    ("flip", lambda x: np.flip(x)),
    ("flip axis", lambda x: np.flip(x, axis=1)),
    ("fliplr", np.fliplr),
    ("flipud", np.flipud),
    ("rot90", np.rot90),
    ("x.T", lambda x: x.T),
    ("transpose", np.transpose),
    ("x.transpose", lambda x: x.transpose(1, 0)),
    ("swapaxes", lambda x: np.swapaxes(x, 0, 1)),
    ("moveaxis", lambda x: np.moveaxis(x, 0, -1)),
    ("reshape", lambda x: x.reshape(6, 4)),
    ("np.reshape", lambda x: np.reshape(x, (2, 12))),
    ("ravel", np.ravel),
    ("x.ravel", lambda x: x.ravel()),
    ("real", lambda x: x.real),
    ("np.real", np.real),
    ("squeeze", lambda x: np.squeeze(x[:, None])),
    ("expand_dims", lambda x: np.expand_dims(x, 0)[0]),
    ("atleast_3d", lambda x: np.atleast_3d(x)[..., 0]),
    ("view of a view", lambda x: np.flip(x[1:].T, axis=0)[::2]),
]


def write_through(make):
    """A function that writes a traced value into a view of x, then augments through it."""
    def f(x, v):
        x = x.copy()
        view = make(x)
        view[0] = v
        view[-1] *= v
        return np.sin(x) * W

    return f


@pytest.mark.parametrize("name, make", VIEW_MAKERS, ids=[n for n, _ in VIEW_MAKERS])
def test_write_through_view_changes_base_as_numpy(name, make, rng):
    """A write into the view reaches the base as in numpy: value, gradient, compiled, replayed."""
    assert_as_numpy(write_through(make), rng.standard_normal((4, 6)), 0.7, modes=("rev", "fwd"))


def _power(b):
    """Σ Re(b)² + 3 Im(b)², as Re Σ (2 b conj(b) - b²): complex values meet np.real only at the end."""
    return np.real(np.sum(2 * b * np.conj(b) - b * b))


@pytest.mark.parametrize("name, make", [(n, m) for n, m in VIEW_MAKERS if "real" not in n],
                         ids=[n for n, _ in VIEW_MAKERS if "real" not in n])
def test_write_through_view_of_a_complex_array(name, make, rng):
    """A complex value written into a view of a complex array reaches the base as in numpy, and
    the derivatives in the real and imaginary parts, first and second, are central differences'.
    (x.real and np.real of a complex array are views of half of each element: refused, below.)"""
    def f(x, y, v, w):
        z = np.astype(x, complex) + 1j * np.astype(y, complex)  # products and sums of complex values only
        u = np.astype(v, complex) + 1j * np.astype(w, complex)
        view = make(z)
        view[0] = u
        view[-1] *= u
        return z

    x, y = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    v, w = np.array(0.7), np.array(-0.4)
    z = x + 1j * y
    expected = z.copy()
    view = make(expected)
    view[0] = 0.7 - 0.4j
    view[-1] *= 0.7 - 0.4j
    np.testing.assert_allclose(trace(f, x, y, v, w)[0], expected, rtol=1e-15)
    check_grad(lambda *a: _power(f(*a) * W), x, y, v, w, order=2, modes=("rev",))


#: copies, where numpy's result shares no memory: a write leaves the base alone
COPY_MAKERS = [
    ("flatten", lambda x: x.flatten()),
    ("reshape of a transpose", lambda x: x.T.reshape(-1)),
    ("ravel of a transpose", lambda x: np.ravel(x.T)),
    ("fancy index", lambda x: x[[0, 2]]),
    ("mask", lambda x: x[x > 0]),
    ("copy", np.copy),
]


@pytest.mark.parametrize("name, make", COPY_MAKERS, ids=[n for n, _ in COPY_MAKERS])
def test_write_into_copy_leaves_base_alone(name, make, rng):
    """flatten, a reshape numpy must copy, advanced indexing: the write stays in the copy."""
    def f(x, v):
        x = x.copy()
        c = make(x)
        c[0] = v
        return np.sin(x) * W + np.sum(c * c)

    assert_as_numpy(f, rng.standard_normal((4, 6)), 0.7)


#: views numpy makes read-only, with numpy's error
READ_ONLY = [
    ("diagonal", lambda x: np.diagonal(x)),
    ("x.diagonal", lambda x: x.diagonal()),
    ("broadcast_to", lambda x: np.broadcast_to(x[0], (3, 6))),
    ("imag of a real array", lambda x: x.imag),
]


@pytest.mark.parametrize("name, make", READ_ONLY, ids=[n for n, _ in READ_ONLY])
def test_write_into_read_only_view_raises_as_numpy(name, make):
    """diagonal, broadcast_to and .imag of a real array are read-only: ValueError, as numpy."""
    def f(x, v):
        make(x)[0] = v
        return np.sum(x)

    with pytest.raises(ValueError, match="assignment destination is read-only"):
        f(np.ones((4, 6)), 0.5)
    with pytest.raises(ValueError, match=r"assignment destination is read-only; take a copy "
                                         r"first with x.copy\(\)"):
        grad(f, np.ones((4, 6)), 0.5)


def test_split_parts_stay_views_after_a_sibling_write(rng):
    """a, b = np.split(x, 2); a[0] = v; b[0] = 2 * x[0]: both parts write into x, as numpy."""
    def f(x, v):
        x = x.copy()
        a, b = np.split(x, 2)
        a[0] = v
        b[0] = 2 * x[0] + b[1]
        return np.sin(x) * W[:, :1]

    x = rng.standard_normal((4, 1))
    check_grad(f, x, 0.3, modes=("rev",))
    np.testing.assert_array_equal(trace(f, x, 0.3)[0], f(x.copy(), 0.3))


def test_view_read_after_base_write_shows_the_write(rng):
    """y = x[1:]; x[2] = v; then y shows v, as numpy does, and v's gradient flows through y."""
    def f(x, v):
        x = x.copy()
        y = x[1:]
        t = x.T
        x[2] = v
        return np.sum(y * y) + np.sum(t[2] * 3.0)

    x = rng.standard_normal(4)
    check_grad(f, x, 0.5, modes=("rev",))
    assert trace(f, x, 0.5)[0] == pytest.approx(f(x.copy(), 0.5), rel=1e-15)


def test_view_of_a_dual_base_written_in_place_raises():
    """Forward mode does not take a view again after its base was written: StaleViewError."""
    def f(x):
        x = x.copy()
        y = x[1:]
        x[2] = 5.0 * x[0]
        return np.sum(y)

    with pytest.raises(StaleViewError, match=r"is a view of the dual value float64\[3\], which "
                                             r"was written in place at test_views.py:\d+"):
        tapegrad.jvp(f, (np.ones(3),), (np.ones(3),))


def test_write_into_a_complex_part_is_refused():
    """x.real of a complex array is half of each element: the write is refused, naming the fix."""
    def f(x):
        z = x * (1 + 1j)
        z.real[0] = 1.0
        return np.sum(np.abs(z))

    with pytest.raises(TypeError, match=r"real of a complex array .* update the original array"):
        grad(f, np.ones(3))
