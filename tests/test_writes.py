"""In-place writes as numpy does them: repeated-index assignment (the last write wins),
buffered augmented assignment against np.add.at (every add counts), out= of ufuncs and
reductions, np.copyto, np.put, np.place, np.fill_diagonal and x.fill, into traced arrays and
preallocated buffers; np.r_ and np.c_ of traced values."""
import numpy as np
import pytest

import tapegrad
from tapegrad import ConcreteValueError, check_grad, grad, gradient
from tapegrad.arraylike import added_at

from conftest import assert_as_numpy

# rules these tests drive through check_grad (see tests/rules/test_coverage.py)
EXERCISED = {added_at}


def _on_copy(write):
    def f(x, v):
        x = x.copy()
        write(x, v)
        return x

    return f


def _on_buffer(make, write):
    def f(x, v):
        b = make(x)
        write(b, v)
        return b * x[0]

    return f


#: (name, f(x, v)) for x of shape (4,), v of shape (3,)
IDIOMS = [
    ("x[[0, 0, 1]] = v", _on_copy(lambda x, v: x.__setitem__([0, 0, 1], v))),
    ("x[[0, 1, 0]] += v", _on_copy(lambda x, v: x.__setitem__([0, 1, 0], x[[0, 1, 0]] + v))),
    ("add.at", _on_copy(lambda x, v: np.add.at(x, [0, 1, 0], v))),
    ("add.at broadcast", _on_copy(lambda x, v: np.add.at(x, [3, 3], v[1]))),
    ("subtract.at", _on_copy(lambda x, v: np.subtract.at(x, [2, 2, 0], v))),
    ("add.at into buffer", _on_buffer(lambda x: np.zeros(4), lambda b, v: np.add.at(b, [0, 0, 2], v))),
    ("ufunc out= traced", _on_copy(lambda x, v: np.multiply(x, v[0], out=x))),
    ("ufunc out= buffer", _on_buffer(lambda x: np.ones(4), lambda b, v: np.sin(v[:1] * b[0] + 1.0, out=b))),
    ("ufunc out= where", _on_buffer(lambda x: np.ones(4), lambda b, v: np.add(
        np.r_[v, 0.5], 1.0, out=b, where=np.array([True, False, True, True])))),
    ("reduction out=", _on_buffer(lambda x: np.zeros(3), lambda b, v: np.sum(
        np.stack([v, v * v]), axis=0, out=b))),
    ("reduction out= view", _on_buffer(lambda x: np.zeros(4), lambda b, v: np.mean(
        np.stack([v[:2], v[1:]]), axis=1, out=b[1:3]))),
    ("copyto", _on_buffer(lambda x: np.zeros((2, 3)), lambda b, v: np.copyto(b, v))),
    ("copyto where", _on_copy(lambda x, v: np.copyto(x, v[0], where=np.array([1, 0, 1, 0], bool)))),
    ("put", _on_buffer(lambda x: np.zeros(5), lambda b, v: np.put(b, [0, 2, 0, 4], v))),
    ("put wrap", _on_copy(lambda x, v: np.put(x, [5, -1], v[:2], mode="wrap"))),
    ("put into traced", _on_copy(lambda x, v: (np.put(x, [1], 2.0), x.__imul__(v[0])))),
    ("place", _on_buffer(lambda x: _arange_buffer(6),
                         lambda b, v: np.place(b, b > 2.5, v[:2]))),
    ("fill_diagonal", _on_buffer(lambda x: np.ones((3, 3)), lambda b, v: np.fill_diagonal(b, v))),
    ("fill_diagonal scalar", _on_buffer(lambda x: np.ones((4, 3)), lambda b, v: np.fill_diagonal(
        b, v[2], wrap=True))),
    ("fill_diagonal of traced", lambda x, v: _fill_diagonal_of(np.outer(x, v))),
    ("fill", _on_buffer(lambda x: np.empty((2, 2)), lambda b, v: b.fill(v[1]))),
    ("x.fill", _on_copy(lambda x, v: x.fill(v[0] * 2.0))),
]


def _arange_buffer(n):
    b = np.zeros(n)
    b[:] = np.arange(float(n))
    return b


def _fill_diagonal_of(m):
    np.fill_diagonal(m, 7.0)
    return m


@pytest.mark.parametrize("name, f", IDIOMS, ids=[n for n, _ in IDIOMS])
def test_write_idiom_as_numpy(name, f, rng):
    """Each in-place idiom gives numpy's value and the gradient of central differences."""
    assert_as_numpy(f, rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 3))


#: the idioms that write into a copy of x: with a complex x, complex values go in
COMPLEX_IDIOMS = ["x[[0, 0, 1]] = v", "x[[0, 1, 0]] += v", "add.at", "add.at broadcast", "subtract.at",
                  "ufunc out= traced", "copyto where", "put wrap", "put into traced", "x.fill"]


def _power(b):
    """Σ Re(b)² + 3 Im(b)², as Re Σ (2 b conj(b) - b²): complex values meet np.real only at the end."""
    return np.real(np.sum(2 * b * np.conj(b) - b * b))


def _complex_of(x, y):
    """x + iy, made with casts so that every product and sum in it is of complex values."""
    return np.astype(x, complex) + 1j * np.astype(y, complex)


@pytest.mark.parametrize("name, f", [(n, f) for n, f in IDIOMS if n in COMPLEX_IDIOMS], ids=COMPLEX_IDIOMS)
def test_write_idiom_on_complex_values(name, f, rng):
    """Each idiom on a complex x and complex values v gives numpy's value, and derivatives in
    their real and imaginary parts, first and second, as central differences give."""
    xr, xi, vr, vi = (rng.uniform(0.5, 1.5, n) for n in (4, 4, 3, 3))
    x, v = xr + 1j * xi, vr + 1j * vi
    expected = f(x.copy(), v)
    assert expected.dtype == np.complex128
    np.testing.assert_allclose(tapegrad.trace(f, x, v)[0], expected, rtol=1e-15)
    weights = np.array([1.0, -2.0, 0.5, 3.0])
    check_grad(lambda xr, xi, vr, vi: _power(f(_complex_of(xr, xi), _complex_of(vr, vi)) * weights),
               xr, xi, vr, vi, order=2, modes=("rev",))


def test_repeated_index_assignment_last_write_wins():
    """x[[0, 0]] = y keeps y[1] in numpy, so y[0] gets no gradient."""
    def f(x, y):
        x = x.copy()
        x[[0, 0]] = y
        return x[0] * 3.0

    _, (_, dx, dy) = grad(f, np.ones(2), np.array([4.0, 5.0]))
    assert dx.tolist() == [0.0, 0.0] and dy.tolist() == [0.0, 3.0]


def test_buffered_augmented_assignment_against_add_at():
    """x[[0, 1, 0]] += v adds v[2] once to x[0] (buffered); np.add.at adds v[0] and v[2]."""
    def buffered(x, v):
        x = x.copy()
        x[[0, 1, 0]] += v
        return x

    def unbuffered(x, v):
        x = x.copy()
        np.add.at(x, [0, 1, 0], v)
        return x

    x, v = np.zeros(2), np.array([1.0, 2.0, 4.0])
    seed = np.array([1.0, 10.0])
    assert tapegrad.trace(buffered, x, v)[0].tolist() == [4.0, 2.0] == buffered(x, v).tolist()
    assert tapegrad.trace(unbuffered, x, v)[0].tolist() == [5.0, 2.0] == unbuffered(x, v).tolist()
    assert gradient(buffered, x, v, seed=seed)[1].tolist() == [0.0, 10.0, 1.0]
    assert gradient(unbuffered, x, v, seed=seed)[1].tolist() == [1.0, 10.0, 1.0]


def test_other_ufunc_at_is_refused():
    """np.multiply.at with traced values raises, naming itself and the fix."""
    def f(x):
        x = x.copy()
        np.multiply.at(x, [0, 0], 2.0)
        return x

    with pytest.raises(NotImplementedError, match=r"np.multiply.at at test_writes.py:\d+ .*np.add.at"):
        grad(f, np.ones(2), seed=np.ones(2))


def test_out_into_a_plain_array_is_refused():
    """out= naming a plain array from outside the trace raises the error that says how to fix it."""
    def f(x):
        np.multiply(x, 2.0, out=PLAIN)
        return x

    with pytest.raises(ConcreteValueError, match="into a plain array"):
        grad(f, np.ones(3), seed=np.ones(3))


PLAIN = np.zeros(3)


# --- r_ and c_ ---

#: (name, f(x)) for x of shape (3,)
LIST_IDIOMS = [
    ("r_", lambda x: np.r_[x[0], 1.0, x[1:], [x[2], 3.0], 0:2]),
    ("r_ of arrays", lambda x: np.r_[x, np.ones(2), x[::-1]]),
    ("c_", lambda x: np.c_[x, 2.0 * x, np.arange(3.0)]),
    ("c_ of 2-d", lambda x: np.c_[np.outer(x, x), x]),
    ("mean of np.array", lambda x: np.mean(np.array([x[0] * x[1], np.sin(x[2]), 2.0]))),
    ("linalg.norm of np.array", lambda x: np.linalg.norm(np.array([x[0], 3.0, x[2]]))),
]


@pytest.mark.parametrize("name, f", LIST_IDIOMS, ids=[n for n, _ in LIST_IDIOMS])
def test_list_idiom_as_numpy(name, f, rng):
    """r_ and c_ of traced values, and reductions of array literals, give numpy's value and
    gradient, in forward mode too."""
    assert_as_numpy(f, rng.uniform(0.5, 1.5, 3), modes=("rev", "fwd"))


def test_numpy_objects_are_numpys_outside_a_trace():
    """Outside a trace np.r_, np.c_ and np.fill_diagonal are numpy's own objects (from the
    first call of one after a trace on)."""
    np.r_[1:2]
    assert type(np.r_).__name__ == "RClass" and type(np.c_).__name__ == "CClass"
    assert np.fill_diagonal.__module__ == "numpy"


def test_r_directive_with_traced_values_is_refused():
    """np.r_['0,2', ...] with traced values names itself and the fix."""
    with pytest.raises(TypeError, match=r"np.r_\['0,2', ...\] with traced values.*np.concatenate"):
        grad(lambda x: np.sum(np.r_["0,2", x, x]), np.ones(2))


# --- casts ---


def test_int64_of_a_traced_number_is_a_guarded_constant():
    """np.int64(t) is an integer taken with a guard, as int(t): replay on another integer part fails."""
    def f(x):
        return x * np.int64(x)

    value, tape = tapegrad.trace(f, 2.5)
    assert value == 5.0 and tape.replay(f, 2.75) == 5.5
    with pytest.raises(tapegrad.GuardError, match=r"int\(\) is now 3, the tape recorded 2"):
        tape.replay(f, 3.5)
    assert grad(f, 2.5)[1][1] == 2.0
