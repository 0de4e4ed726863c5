"""Preallocated buffers: arrays from np.zeros, np.empty, np.ones, np.full and their _like forms,
filled with traced values by index, slice, mask or fancy index, differentiate as numpy computes
them, traced, compiled and replayed; outside a trace and in other threads numpy is untouched."""
import threading

import numpy as np
import pytest

import tapegrad
from tapegrad import ConcreteValueError, check_grad, grad, trace
from tapegrad.buffers import Buffer
from tapegrad.literals import CONSTRUCTORS

from conftest import assert_as_numpy

#: (name, a constructor call making a (4, 3) float64 array from x, a traced (4, 3) array)
CONSTRUCTOR_CALLS = [
    ("zeros", lambda x: np.zeros((4, 3))),
    ("empty", lambda x: np.empty((4, 3))),
    ("ones", lambda x: np.ones((4, 3))),
    ("full", lambda x: np.full((4, 3), 2.5)),
    ("zeros_like", lambda x: np.zeros_like(x)),
    ("empty_like", lambda x: np.empty_like(x)),
    ("ones_like", lambda x: np.ones_like(x)),
    ("full_like", lambda x: np.full_like(x, -1.5)),
]

#: (name, a write of traced values into the buffer b, from x)
WRITES = [
    ("index", lambda b, x: b.__setitem__((1, 2), x[0, 0] * x[1, 1])),
    ("row", lambda b, x: b.__setitem__(0, np.sin(x[2]))),
    ("slice", lambda b, x: b.__setitem__(slice(1, 3), x[:2] ** 2)),
    ("mask", lambda b, x: b.__setitem__(x > 0, x[x > 0] * 3.0)),
    ("fancy", lambda b, x: b.__setitem__(([0, 3], [1, 2]), x[0, :2])),
    ("broadcast", lambda b, x: b.__setitem__((slice(None), 1), x[1, 0])),
    ("fill", lambda b, x: b.fill(x[3, 2])),
    ("augmented", lambda b, x: b.__setitem__(slice(None), b + x * x)),
]


@pytest.mark.parametrize("cname, make", CONSTRUCTOR_CALLS, ids=[n for n, _ in CONSTRUCTOR_CALLS])
@pytest.mark.parametrize("wname, write", WRITES, ids=[n for n, _ in WRITES])
def test_buffer_written_with_traced_values(cname, make, wname, write, rng):
    """Each constructor's buffer, written each way, has numpy's value and the right gradient."""
    def f(x):
        b = make(x)
        if cname.startswith("empty"):
            b[...] = 0.5  # numpy leaves empty's values unset
        write(b, x)
        return b * 2.0 + 1.0

    assert_as_numpy(f, rng.standard_normal((4, 3)), modes=("rev", "fwd"))


def euler(p, u0, n=20, dt=0.05):
    """A damped oscillator x'' = -k x - c x', Euler steps into a preallocated trajectory."""
    k, c = p
    traj = np.zeros((n, 2))
    traj[0] = u0
    for i in range(len(traj) - 1):  # len() of a traced buffer: a shape, it joins no rows
        x, v = traj[i]
        traj[i + 1] = traj[i] + dt * np.array([v, -k * x - c * v])
    return traj


def test_euler_trajectory_differentiates_in_parameters_and_initial_state():
    """The Euler integrator every course writes: gradient w.r.t. p and u0, as numpy computes."""
    assert_as_numpy(euler, np.array([4.0, 0.3]), np.array([1.0, 0.0]), modes=("rev", "fwd"))


def test_euler_trajectory_closed_form():
    """With c = 0 and one step, x1 = x0 + dt v0 and v1 = v0 - dt k x0: exact derivatives."""
    def last(p, u0):
        return euler(p, u0, n=2, dt=0.1)[1, 1]

    _, (_, dp, du0) = grad(last, np.array([4.0, 0.0]), np.array([1.5, 0.5]))
    assert dp.tolist() == [-0.1 * 1.5, -0.1 * 0.5] and du0.tolist() == [-0.1 * 4.0, 1.0]


def test_plain_initial_state_then_traced_steps(rng):
    """A buffer first written with plain values and then with traced ones keeps both."""
    def f(k):
        u = np.ones(4)
        u[1] = 3.0
        u[2:] = k * u[:2]
        return u

    assert_as_numpy(f, 0.7, modes=("rev", "fwd"))


def test_write_through_a_view_of_a_buffer(rng):
    """row = b[1]; row[2] = t writes into b, as in numpy, before and after b is traced."""
    def f(x):
        b = np.zeros((3, 4))
        row, col = b[1], b[:, 2]
        row[2] = x[0]
        col[0] = x[1] * 2.0
        b.T[3, 2] = x[2]
        return b

    assert_as_numpy(f, rng.standard_normal(3), modes=("rev", "fwd"))


def test_buffer_never_written_with_traced_values_records_nothing():
    """A buffer only ever holding constants adds no op to the tape, and its results are plain."""
    seen = []

    def f(x):
        b = np.zeros(3)
        b[0] = 2.0
        c = b * 3.0 + 1.0
        seen.append((type(b), type(c), type(np.sum(b))))
        return x * np.sum(c)

    _, tape = trace(f, 1.5)
    assert str(tape) == (
        "Tape\n"
        "  inp %1::function f\n"
        "  inp %2::float64   # x\n"
        "  %3 = multiply(%2, 9.0)::float64"
    )
    assert seen == [(Buffer, np.ndarray, np.float64)]


def test_numpy_is_untouched_outside_a_trace_and_in_other_threads():
    """Outside a trace np.zeros is numpy's own (put back as the trace ends); while one thread
    traces, another gets plain arrays."""
    assert all(getattr(np, name) is fn for name, fn in CONSTRUCTORS.items())
    started, done, seen = threading.Event(), threading.Event(), []

    def other():
        started.wait()
        seen.append(type(np.zeros(2)))
        done.set()

    def f(x):
        started.set()
        done.wait(10)
        b = np.zeros(2)
        b[0] = x
        return b

    t = threading.Thread(target=other)
    t.start()
    value, _ = trace(f, 1.5)
    t.join()
    assert seen == [np.ndarray] and value.tolist() == [1.5, 0.0]
    assert type(np.zeros(1)) is np.ndarray
    assert all(getattr(np, name) is fn for name, fn in CONSTRUCTORS.items())


def test_constructor_imported_by_name_gives_the_clear_error():
    """``from numpy import zeros`` bypasses the buffers: the write raises, saying how to build it."""
    zeros = CONSTRUCTORS["zeros"]

    def f(x):
        b = zeros(2)
        b[0] = x
        return b

    with pytest.raises(ConcreteValueError, match="a traced value cannot be written into a plain "
                                                 "ndarray"):
        grad(lambda x: np.sum(f(x)), 1.0)


def test_buffer_returned_inside_a_structure(rng):
    """A traced buffer returned in a tuple or dict is the traced value it stands for."""
    def f(x):
        b = np.zeros(2)
        b[1] = x
        return {"b": b, "twice": (b * 2.0, b)}

    out, tape = trace(f, 1.5)
    assert out["b"].tolist() == [0.0, 1.5] and out["twice"][0].tolist() == [0.0, 3.0]
    check_grad(lambda x: f(x)["twice"][1], 0.3, modes=("rev", "fwd"))


def test_traced_buffer_behaves_as_the_traced_array(rng):
    """Methods, attributes, iteration, operators on either side and numpy functions of a
    traced buffer act on its traced value."""
    def f(x):
        b = np.zeros(3)
        b[:] = x
        total = sum(v * v for v in b)
        b += x
        b *= 2.0
        return (total + b.sum() + np.mean(b) + (x @ b) + (b @ x) + b.T.dot(x) + len(b)
                + np.stack([b, x]).max() + b.reshape(3, 1)[2, 0] + b.shape[0])

    check_grad(f, rng.standard_normal(3), modes=("rev", "fwd"))
    x = rng.standard_normal(3)
    assert grad(f, x)[0] == pytest.approx(f(x), rel=1e-14)


def test_plain_array_of_a_traced_buffer_is_refused():
    """np.asarray / np.array of a traced buffer would read memory without gradient: refused."""
    def f(x):
        b = np.zeros(2)
        b[0] = x
        return np.sum(np.asarray(b))

    with pytest.raises(ConcreteValueError, match=r"numpy tried to turn the traced value %\d+::float64\[2\] "
                                                 r"into a plain array at test_buffers.py:\d+"):
        grad(f, 1.0)


def test_hessian_through_a_buffer_matches_differences_of_the_gradient():
    """Forward over reverse runs through a buffer: the Hessian of an Euler loss in (k, c)."""
    def loss(p):
        return np.sum(euler(p, np.array([1.0, 0.0]), n=8, dt=0.1)[:, 0] ** 2)

    p, h = np.array([4.0, 0.3]), 1e-5
    H = tapegrad.hessian(loss, p)
    fd = [(gradient_of(loss, p + h * e) - gradient_of(loss, p - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(H, np.array(fd), rtol=1e-6, atol=1e-9)


def gradient_of(f, x):
    return tapegrad.gradient(f, x)[0]


def test_forward_mode_takes_buffers():
    """In jvp the constructors' buffers take dual values, and what comes back is plain: the
    trajectory and its variation are ndarrays, and the variation is the Jacobian's column
    (reverse mode's) and the central difference along the direction."""
    p, u0, v = np.array([4.0, 0.3]), np.array([1.0, 0.0]), np.array([0.5, -2.0])
    y, dy = tapegrad.jvp(lambda p: euler(p, u0), (p,), (v,))
    assert type(y) is np.ndarray and type(dy) is np.ndarray
    np.testing.assert_array_equal(y, euler(p, u0))
    np.testing.assert_allclose(dy, tapegrad.jacobian(lambda p: euler(p, u0), p) @ v, rtol=1e-13)
    h = 1e-6
    np.testing.assert_allclose(dy, (euler(p + h * v, u0) - euler(p - h * v, u0)) / (2 * h), atol=1e-8)
    J = tapegrad.jacobian(lambda p: euler(p, u0), p, mode="fwd")
    np.testing.assert_allclose(J, tapegrad.jacobian(lambda p: euler(p, u0), p, mode="rev"), rtol=1e-13)


def test_forward_mode_buffer_returned_inside_a_structure():
    """A buffer returned in a dict or tuple from jvp is its value and its variation, plain."""
    def f(x):
        b = np.zeros(3)
        b[1:] = x * x
        return {"b": b, "pair": (b @ x[[0, 0, 1]], np.ones(2))}

    x = np.array([2.0, 3.0])
    y, dy = tapegrad.jvp(f, (x,), (np.array([1.0, 0.0]),))
    assert type(y["b"]) is np.ndarray and type(dy["b"]) is np.ndarray
    assert y["b"].tolist() == [0.0, 4.0, 9.0] and dy["b"].tolist() == [0.0, 4.0, 0.0]
    # b @ (x0, x0, x1) = x0³ + x1³: its variation along x0 is 3 x0² = 12
    assert y["pair"][0] == 35.0 and dy["pair"][0] == 12.0
    assert dy["pair"][1].tolist() == [0.0, 0.0]


def test_forward_mode_refuses_a_plain_array_made_outside():
    """An array made outside the function jvp runs is numpy's: a dual value written into it is
    refused with tapegrad's error, at the user's line, naming how to make the array."""
    outside = np.zeros(3)

    def f(x):
        outside[1] = x[0]
        return outside

    with pytest.raises(ConcreteValueError, match=r"numpy could not store a value into a plain array at "
                                                 r"test_buffers.py:\d+: a dual value cannot be written "
                                                 r"into a plain ndarray.*np.zeros"):
        tapegrad.jvp(f, (np.ones(2),), (np.ones(2),))


@pytest.mark.parametrize("make", [lambda x: np.zeros_like(x), lambda x: np.ones_like(x),
                                  lambda x: np.full_like(x, 0.5)], ids=["zeros_like", "ones_like", "full_like"])
def test_forward_mode_inside_a_gradient_fills_an_array_made_like_its_argument(make):
    """grad of a jvp (reverse over forward): ``b = np.zeros_like(x)`` of the jvp's argument,
    which holds a traced value, takes the dual values written into it. f = Σ b², b = (c, x0 x1),
    so the variation along x0 is 2 x0 x1², and its gradient (2 x1², 4 x0 x1)."""
    def f(x):
        b = make(x)
        b[1] = x[0] * x[1]
        return np.sum(b * b)

    def along_x0(x):
        return tapegrad.jvp(f, (x,), (np.array([1.0, 0.0]),))[1]

    x = np.array([0.5, 1.5])
    value, (_, g) = grad(along_x0, x)
    assert value == 2 * 0.5 * 1.5 ** 2 and g.tolist() == [2 * 1.5 ** 2, 4 * 0.5 * 1.5]
    check_grad(f, x, order=2, modes=("rev", "fwd"))


def test_forward_mode_inside_a_gradient_refuses_a_write_into_a_constant_array():
    """An array that does not vary in the inner forward pass (made from the gradient's traced
    value only) cannot take a dual value: a TypeError that names the line and the way out,
    not an internal error."""
    def outer(c):
        k = c * np.ones(2)

        def f(x):
            b = k * 1.0
            b[0] = x * 2.0
            return np.sum(b)

        return tapegrad.jvp(f, (1.0,), (1.0,))[1] * c

    with pytest.raises(TypeError, match=r"at test_buffers.py:\d+ was written in place with a value that "
                                        r"varies in a forward pass \(jvp\).*np.zeros_like\(x\)"):
        grad(outer, 3.0)


#: (name, a constructor call making a (4, 3) complex128 array, from a traced complex (4, 3) z)
COMPLEX_CONSTRUCTOR_CALLS = [
    ("zeros", lambda z: np.zeros((4, 3), dtype=complex)),
    ("empty", lambda z: np.empty((4, 3), dtype=complex)),
    ("ones", lambda z: np.ones((4, 3), dtype=np.complex128)),
    ("full", lambda z: np.full((4, 3), 1.0 - 2.0j)),
    ("zeros_like", lambda z: np.zeros_like(z)),
]

#: (name, a write of traced complex values into the complex buffer b, from z)
COMPLEX_WRITES = [
    ("index", lambda b, z: b.__setitem__((1, 2), z[0, 0] * z[1, 1])),
    ("row", lambda b, z: b.__setitem__(0, z[2] * z[2])),
    ("slice", lambda b, z: b.__setitem__(slice(1, 3), z[:2] * z[2:])),
    ("mask", lambda b, z: b.__setitem__(MASK, z[MASK] * 3.0)),
    ("fancy", lambda b, z: b.__setitem__(([0, 3], [1, 2]), z[0, :2])),
    ("broadcast", lambda b, z: b.__setitem__((slice(None), 1), z[1, 0])),
    ("fill", lambda b, z: b.fill(z[3, 2])),
    ("augmented", lambda b, z: b.__setitem__(slice(None), b + z * z)),
    ("add.at", lambda b, z: np.add.at(b, ([0, 0, 3], [1, 1, 2]), z[0, :3])),
]
MASK = np.array([[True, False, True], [False, False, True], [True, True, False], [False, True, False]])


def _power(b):
    """Σ Re(b)² + 3 Im(b)², as Re Σ (2 b conj(b) - b²): complex values meet np.real only at the end."""
    return np.real(np.sum(2 * b * np.conj(b) - b * b))


@pytest.mark.parametrize("cname, make", COMPLEX_CONSTRUCTOR_CALLS, ids=[n for n, _ in COMPLEX_CONSTRUCTOR_CALLS])
@pytest.mark.parametrize("wname, write", COMPLEX_WRITES, ids=[n for n, _ in COMPLEX_WRITES])
def test_complex_buffer_written_with_traced_values(cname, make, wname, write, rng):
    """A complex buffer written each way with complex values z = x + iy: numpy's value, and
    first and second derivatives in x and y as central differences give."""
    def fill(z):
        b = make(z)
        if cname == "empty":
            b[...] = 0.5  # numpy leaves empty's values unset
        write(b, z)
        return b

    def f(x, y):
        # (z built with casts: every product and sum in it is of complex values)
        return _power(fill(np.astype(x, complex) + 1j * np.astype(y, complex)) * (2.0 - 1.0j) + 1.0)

    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    z = x + 1j * y
    np.testing.assert_allclose(tapegrad.trace(fill, z)[0], fill(z.copy()), rtol=1e-15)
    check_grad(f, x, y, order=2, modes=("rev", "fwd"))


def test_write_into_a_part_of_complex_buffer_elements_is_refused():
    """b.real of a complex buffer is half of each element: a traced write into it is refused."""
    def f(x):
        b = np.zeros(2, dtype=complex)
        b.real[0] = x
        return b

    with pytest.raises(TypeError, match=r"parts of the buffer's elements \(.real, .imag"):
        grad(lambda x: np.abs(f(x)).sum(), 1.0)


# --- row by row: a buffer written and read by rows keeps each row as a value of its own ---

def _row_then_overwrite(x):
    b = np.zeros((3, 2))
    b[1] = x[:2]
    r = b[1]  # a view in numpy: it shows the next write
    b[1] = x[1:] * 3.0
    b[-1, 0] = x[0] * x[2]
    return np.concatenate([r, b.ravel()])


def _row_written_through_after_join(x):
    b = np.ones((3, 2))
    b[0] = x[:2]
    r = b[0]
    total = b.sum()  # the rows are joined into one array here
    r[1] = x[2] ** 2  # and the row handed out before still writes into b
    return b * total


def _elements_of_a_vector(x):
    u = np.zeros(4)
    u[0] = x[0]
    for i in range(3):
        u[i + 1] = u[i] * x[1] + x[2]
    u[-2] = u[-2] * 2.0
    return u


def _augmented_through_views(x):
    b = np.zeros((3, 2))
    b[0] += x[:2]  # numpy: tmp = b[0]; tmp += v (into b); b[0] = tmp
    b[:, 1] += x[2]
    b[1:] *= x[0]
    return b


def _augmented_through_copies(x):
    b = np.ones(4)
    b[np.array([True, False, True, False])] += x[:2]  # b[mask] is a copy, then stored back
    b[[1, 3]] *= x[2]
    c = np.zeros((2, 3))
    c[1][1:] += x[:2]
    d = np.zeros(3)
    d[:] = c[1]  # a traced buffer's row as the value of a write into another buffer
    return np.concatenate([b, c.ravel(), d])


@pytest.mark.parametrize("f", [_row_then_overwrite, _row_written_through_after_join,
                               _elements_of_a_vector, _augmented_through_views,
                               _augmented_through_copies], ids=lambda f: f.__name__.strip("_"))
def test_rows_behave_as_numpys_rows(f, rng):
    """Rows handed out are views of the buffer, before and after it is read as a whole."""
    assert_as_numpy(f, rng.uniform(0.5, 1.5, 3), modes=("rev", "fwd"))


def test_a_step_records_one_row_not_a_copy_of_the_trajectory():
    """Each Euler step records its row (float64[2]); the trajectory is joined once, at the end."""
    _, tape = trace(lambda p, u0: euler(p, u0, n=3, dt=0.1), np.array([4.0, 0.3]), np.array([1.0, 0.0]))
    lines = str(tape).splitlines()
    assert sum("::float64[3,2]" in line for line in lines) == 1
    assert lines[-1] == "  %27 = stack([%6, %16, %26])::float64[3,2]"
    assert lines[6] == "  %6 = updated([0., 0.], ..., %3)::float64[2]"
