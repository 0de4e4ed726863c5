"""The benchmark workloads, each written once as plain numpy, with a hand-written gradient.

Every workload is a factory ``build(np_, **extra)`` that returns the function to
differentiate, written against the numpy module it is given: ``numpy`` itself (hand-written
reference and tapegrad), ``autograd.numpy`` or ``jax.numpy``. Functions that numpy does not
have (``solve_triangular``) come in through ``extra``. Where PyTorch's calls differ from
numpy's, ``torch_build(torch)`` is a small translation; otherwise ``build(torch)`` is used.

``reference(*args)`` is the hand-written NumPy value and gradient, ``(value, grads)`` with one
gradient per position in ``wrt``, in the structure of that argument. It is the reference both
for speed and for values, and can be reused by tests::

    from benchmarks.workloads import WORKLOADS, compare
    w = WORKLOADS["W4"]
    args = w.inputs()
    value, grads = w.reference(*args)
    problems = compare(value, grads, *w.reference(*args))   # [] when they agree to 1e-6

Inputs are float64 and come from ``numpy.random.default_rng(0)``, one generator per workload,
so that each workload's inputs do not depend on which other workloads run.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg

__all__ = ["Workload", "WORKLOADS", "compare", "relative_error", "flatten"]


class Workload:
    """One benchmark problem.

    name, title    -- "W3", "MLP 784-256-256-10, batch 128"
    build          -- ``build(np_, **extra) -> f``; f(*args) returns a scalar
    make_inputs    -- ``make_inputs(rng) -> args`` (a tuple)
    wrt            -- positions of the arguments to differentiate
    reference      -- ``reference(*args) -> (value, grads)``, hand-written NumPy
    n_ops          -- number of primitive operations of one forward pass, for the scalar
                      workloads (per-op cost); None otherwise
    extra          -- names of the non-numpy functions that `build` needs
    torch_build    -- ``torch_build(torch) -> f`` where torch's calls differ from numpy's
    """

    def __init__(self, name, title, build, make_inputs, wrt, reference, n_ops=None,
                 extra=(), torch_build=None, ops_note=""):
        self.name = name
        self.title = title
        self.build = build
        self.make_inputs = make_inputs
        self.wrt = tuple(wrt)
        self.reference = reference
        self.n_ops = n_ops
        self.extra = tuple(extra)
        self.torch_build = torch_build
        self.ops_note = ops_note

    def inputs(self):
        """The arguments, made from a fresh ``numpy.random.default_rng(0)``."""
        return self.make_inputs(np.random.default_rng(0))

    def numpy_function(self):
        """The function built on plain numpy (scipy for the extras)."""
        return self.build(np, **{k: NUMPY_EXTRAS[k] for k in self.extra})

    def __repr__(self):
        return f"<Workload {self.name}: {self.title}>"


# ---------------------------------------------------------------------------------------------
# W1: a / (a + b*b) on Python floats
# ---------------------------------------------------------------------------------------------


def build_w1(np_):
    def w1(a, b):
        return a / (a + b * b)

    return w1


def inputs_w1(rng):
    return (1.5, 0.7)


def reference_w1(a, b):
    s = a + b * b
    value = a / s
    # d/da a/s = 1/s - a/s² ;  d/db = -a/s² * 2b
    inv2 = 1.0 / (s * s)
    return value, (b * b * inv2, -2.0 * a * b * inv2)


# ---------------------------------------------------------------------------------------------
# W1c: x = sin(x)*c + 0.1*x, 1000 steps, on Python floats
# ---------------------------------------------------------------------------------------------

W1C_STEPS = 1000


def build_w1c(np_):
    def w1c(x0, c):
        x = x0
        for _ in range(W1C_STEPS):
            x = np_.sin(x) * c + 0.1 * x
        return x

    return w1c


def inputs_w1c(rng):
    return (0.3, 1.0001)


def reference_w1c(x0, c):
    xs = [x0]
    sins = []
    x = x0
    for _ in range(W1C_STEPS):
        s = np.sin(x)
        sins.append(s)
        x = s * c + 0.1 * x
        xs.append(x)
    dx, dc = 1.0, 0.0
    for k in range(W1C_STEPS - 1, -1, -1):
        dc += dx * sins[k]
        dx = dx * (np.cos(xs[k]) * c + 0.1)
    return float(x), (float(dx), float(dc))


# ---------------------------------------------------------------------------------------------
# W2: the Haaland friction factor, on Python floats
# ---------------------------------------------------------------------------------------------


def build_w2(np_):
    def haaland(eps, D, Re):
        return 1.0 / (-1.8 * np_.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2

    return haaland


def inputs_w2(rng):
    return (1.5e-4, 0.1, 1e5)


def reference_w2(eps, D, Re):
    r = eps / D / 3.7
    t = r ** 1.11 + 6.9 / Re
    s = -1.8 * np.log10(t)
    value = 1.0 / s ** 2
    ds = -2.0 / s ** 3
    dt = ds * (-1.8 / (t * np.log(10.0)))
    dr = dt * 1.11 * r ** 0.11
    deps = dr / (3.7 * D)
    dD = -dr * eps / (3.7 * D * D)
    dRe = -dt * 6.9 / (Re * Re)
    return float(value), (float(deps), float(dD), float(dRe))


# ---------------------------------------------------------------------------------------------
# W3: MLP 784 -> 256 tanh -> 256 tanh -> 10, softmax cross-entropy, batch 128
# ---------------------------------------------------------------------------------------------

MLP_SIZES = (784, 256, 256, 10)
MLP_BATCH = 128


def build_w3(np_):
    def mlp_loss(params, X, Y):
        h = X
        for W, b in params[:-1]:
            h = np_.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        zmax = np_.max(z, axis=1, keepdims=True)
        lse = zmax + np_.log(np_.sum(np_.exp(z - zmax), axis=1, keepdims=True))
        return -np_.sum(Y * (z - lse)) / z.shape[0]

    return mlp_loss


def torch_build_w3(torch):
    # np.max(z, axis=1, keepdims=True) -> torch.amax(z, dim=1, keepdim=True); sum likewise
    def mlp_loss(params, X, Y):
        h = X
        for W, b in params[:-1]:
            h = torch.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        zmax = torch.amax(z, dim=1, keepdim=True)
        lse = zmax + torch.log(torch.sum(torch.exp(z - zmax), dim=1, keepdim=True))
        return -torch.sum(Y * (z - lse)) / z.shape[0]

    return mlp_loss


def inputs_w3(rng):
    params = []
    for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        W = rng.standard_normal((m, n)) / np.sqrt(m)
        b = 0.1 * rng.standard_normal(n)
        params.append((W, b))
    X = rng.standard_normal((MLP_BATCH, MLP_SIZES[0]))
    labels = rng.integers(0, MLP_SIZES[-1], MLP_BATCH)
    Y = np.eye(MLP_SIZES[-1])[labels]
    return (params, X, Y)


def reference_w3(params, X, Y, matmul=np.matmul):
    # (`matmul`: benchmarks/cold.py passes one that evicts the cache after each product)
    hs = [X]
    for W, b in params[:-1]:
        hs.append(np.tanh(matmul(hs[-1], W) + b))
    W, b = params[-1]
    z = matmul(hs[-1], W) + b
    zmax = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - zmax)
    s = np.sum(e, axis=1, keepdims=True)
    lse = zmax + np.log(s)
    batch = z.shape[0]
    value = -np.sum(Y * (z - lse)) / batch
    # d/dz of -sum(Y * (z - lse)) / B = (softmax(z) * sum_k Y - Y) / B
    dz = (e / s * np.sum(Y, axis=1, keepdims=True) - Y) / batch
    grads = []
    for i in range(len(params) - 1, -1, -1):
        W = params[i][0]
        h = hs[i]
        grads.append((matmul(h.T, dz), np.sum(dz, axis=0)))
        if i:
            dz = matmul(dz, W.T) * (1.0 - h * h)  # h = tanh(...) is this layer's input
    return float(value), (grads[::-1],)


# ---------------------------------------------------------------------------------------------
# W4: logistic regression, X 20000 x 100
# ---------------------------------------------------------------------------------------------

LOGREG_N, LOGREG_D = 20000, 100


def build_w4(np_):
    def logreg_loss(w, X, y):
        return np_.mean(np_.log(1 + np_.exp(-y * (X @ w)))) + 0.5e-3 * np_.sum(w * w)

    return logreg_loss


def inputs_w4(rng):
    X = rng.standard_normal((LOGREG_N, LOGREG_D))
    w_true = rng.standard_normal(LOGREG_D) / np.sqrt(LOGREG_D)
    y = np.where(X @ w_true + 0.3 * rng.standard_normal(LOGREG_N) > 0, 1.0, -1.0)
    w = 0.1 * rng.standard_normal(LOGREG_D)
    return (w, X, y)


def reference_w4(w, X, y, matmul=np.matmul):
    m = -y * matmul(X, w)
    e = np.exp(m)
    value = np.mean(np.log(1 + e)) + 0.5e-3 * np.dot(w, w)
    dm = e / (1 + e) / X.shape[0]
    dw = matmul(X.T, -y * dm) + 1e-3 * w
    return float(value), (dw,)


# ---------------------------------------------------------------------------------------------
# W5: x = 0.5*x + tanh(x*w + b), 40 steps on length-10 vectors, then sum
# ---------------------------------------------------------------------------------------------

RNN_STEPS, RNN_SIZE = 40, 10


def build_w5(np_):
    def rnn(x0, w, b):
        x = x0
        for _ in range(RNN_STEPS):
            x = 0.5 * x + np_.tanh(x * w + b)
        return np_.sum(x)

    return rnn


def inputs_w5(rng):
    x0 = rng.standard_normal(RNN_SIZE)
    w = rng.standard_normal(RNN_SIZE)
    b = 0.5 * rng.standard_normal(RNN_SIZE)
    return (x0, w, b)


def reference_w5(x0, w, b):
    xs, ts = [x0], []
    x = x0
    for _ in range(RNN_STEPS):
        t = np.tanh(x * w + b)
        ts.append(t)
        x = 0.5 * x + t
        xs.append(x)
    g = np.ones_like(x0)
    dw = np.zeros_like(w)
    db = np.zeros_like(b)
    for k in range(RNN_STEPS - 1, -1, -1):
        da = g * (1.0 - ts[k] * ts[k])
        dw += da * xs[k]
        db += da
        g = 0.5 * g + da * w
    return float(np.sum(x)), (g, dw, db)


# ---------------------------------------------------------------------------------------------
# W6: Gaussian-process negative log marginal likelihood, RBF kernel, 300 2-D points
# ---------------------------------------------------------------------------------------------

GP_N = 300
GP_NOISE = 0.1


def build_w6(np_, solve_triangular):
    def gp_nll(lengthscale, variance, X, y):
        n = X.shape[0]
        d2 = np_.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
        K = variance * np_.exp(-0.5 * d2 / lengthscale ** 2) + GP_NOISE * np_.eye(n)
        L = np_.linalg.cholesky(K)
        v = solve_triangular(L, y, lower=True)
        return 0.5 * np_.dot(v, v) + np_.sum(np_.log(np_.diag(L))) + 0.5 * n * math.log(2 * math.pi)

    return gp_nll


def torch_build_w6(torch):
    # eye needs a dtype; solve_triangular is torch.linalg's, on a column, upper=False
    def gp_nll(lengthscale, variance, X, y):
        n = X.shape[0]
        d2 = torch.sum((X[:, None, :] - X[None, :, :]) ** 2, dim=-1)
        K = variance * torch.exp(-0.5 * d2 / lengthscale ** 2) + GP_NOISE * torch.eye(n, dtype=X.dtype)
        L = torch.linalg.cholesky(K)
        v = torch.linalg.solve_triangular(L, y[:, None], upper=False)[:, 0]
        return 0.5 * torch.dot(v, v) + torch.sum(torch.log(torch.diag(L))) + 0.5 * n * math.log(2 * math.pi)

    return gp_nll


def inputs_w6(rng):
    X = rng.uniform(-3.0, 3.0, (GP_N, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(GP_N)
    return (1.2, 0.8, X, y)


def reference_w6(lengthscale, variance, X, y):
    n = X.shape[0]
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    E = np.exp(-0.5 * d2 / lengthscale ** 2)
    K = variance * E + GP_NOISE * np.eye(n)
    L = np.linalg.cholesky(K)
    alpha = scipy.linalg.cho_solve((L, True), y)
    value = 0.5 * np.dot(y, alpha) + np.sum(np.log(np.diag(L))) + 0.5 * n * math.log(2 * math.pi)
    # d NLL = 0.5 tr((K⁻¹ - α αᵀ) dK);  dK/dvariance = E, dK/dlengthscale = variance E d2 / ℓ³
    A = scipy.linalg.cho_solve((L, True), np.eye(n)) - np.outer(alpha, alpha)
    AE = A * E
    dvariance = 0.5 * np.sum(AE)
    dlengthscale = 0.5 * variance * np.sum(AE * d2) / lengthscale ** 3
    return float(value), (float(dlengthscale), float(dvariance))


# ---------------------------------------------------------------------------------------------
# W7: FFT-based convolution loss, 256x256 image, 9x9 kernel through rfft2/irfft2, MSE
# ---------------------------------------------------------------------------------------------

FFT_SIZE = 256
FFT_KERNEL = 9


def build_w7(np_):
    # circular convolution of the image with the kernel (zero-padded to the image by s=), then
    # the mean squared error against a target; the same calls in numpy, autograd, JAX and torch
    def fft_conv_loss(image, kernel, target):
        shape = tuple(image.shape)
        spectrum = np_.fft.rfft2(image) * np_.fft.rfft2(kernel, s=shape)
        residual = np_.fft.irfft2(spectrum, s=shape) - target
        return np_.mean(residual ** 2)

    return fft_conv_loss


def inputs_w7(rng):
    image = rng.standard_normal((FFT_SIZE, FFT_SIZE))
    kernel = rng.standard_normal((FFT_KERNEL, FFT_KERNEL)) / FFT_KERNEL
    target = rng.standard_normal((FFT_SIZE, FFT_SIZE))
    return (image, kernel, target)


def reference_w7(image, kernel, target):
    shape = image.shape
    fi, fk = np.fft.rfft2(image), np.fft.rfft2(kernel, s=shape)
    residual = np.fft.irfft2(fi * fk, s=shape) - target
    value = np.mean(residual ** 2)
    # the adjoint of a circular convolution is the circular correlation: multiply by the
    # conjugate spectrum of the other factor
    fr = np.fft.rfft2(residual * (2.0 / residual.size))
    dimage = np.fft.irfft2(fr * np.conj(fk), s=shape)
    dkernel = np.fft.irfft2(fr * np.conj(fi), s=shape)[: kernel.shape[0], : kernel.shape[1]]
    return float(value), (dimage, dkernel)


# ---------------------------------------------------------------------------------------------
# W7p: W7 with the kernel already zero-padded to the image (rfft2 of the full array, no s=)
# ---------------------------------------------------------------------------------------------


def build_w7p(np_):
    # the kernel arrives as a full-size array, zero outside its 9x9 corner: both transforms are
    # of full arrays, and the kernel's gradient is full-size too (the issue-36 variant)
    def fft_conv_loss_padded(image, kernel, target):
        spectrum = np_.fft.rfft2(image) * np_.fft.rfft2(kernel)
        residual = np_.fft.irfft2(spectrum, s=tuple(image.shape)) - target
        return np_.mean(residual ** 2)

    return fft_conv_loss_padded


def inputs_w7p(rng):
    image, kernel, target = inputs_w7(rng)
    padded = np.zeros_like(image)
    padded[:FFT_KERNEL, :FFT_KERNEL] = kernel
    return (image, padded, target)


def reference_w7p(image, kernel, target):
    shape = image.shape
    fi, fk = np.fft.rfft2(image), np.fft.rfft2(kernel)
    residual = np.fft.irfft2(fi * fk, s=shape) - target
    value = np.mean(residual ** 2)
    fr = np.fft.rfft2(residual * (2.0 / residual.size))
    dimage = np.fft.irfft2(fr * np.conj(fk), s=shape)
    dkernel = np.fft.irfft2(fr * np.conj(fi), s=shape)
    return float(value), (dimage, dkernel)


#: the non-numpy functions a workload may need, for plain numpy/scipy
NUMPY_EXTRAS = {"solve_triangular": scipy.linalg.solve_triangular}


WORKLOADS = {
    w.name: w
    for w in [
        Workload("W1", "a/(a+b*b), Python floats", build_w1, inputs_w1, (0, 1), reference_w1,
                 n_ops=3, ops_note="multiply, add, divide"),
        Workload("W1c", f"x = sin(x)*c + 0.1*x, {W1C_STEPS} steps, Python floats", build_w1c,
                 inputs_w1c, (0, 1), reference_w1c, n_ops=4 * W1C_STEPS,
                 ops_note="sin, multiply, multiply, add per step"),
        Workload("W2", "Haaland friction factor, Python floats", build_w2, inputs_w2, (0, 1, 2),
                 reference_w2, n_ops=9,
                 ops_note="divide, divide, power, divide, add, log10, multiply, power, divide"),
        Workload("W3", "MLP 784-256-256-10 tanh, softmax xent, batch 128", build_w3, inputs_w3,
                 (0,), reference_w3, torch_build=torch_build_w3),
        Workload("W4", "logistic regression, X 20000x100", build_w4, inputs_w4, (0,), reference_w4),
        Workload("W5", f"x = 0.5x + tanh(x*w + b), {RNN_STEPS} steps, length {RNN_SIZE}", build_w5,
                 inputs_w5, (0, 1, 2), reference_w5, n_ops=5 * RNN_STEPS,
                 ops_note="multiply, multiply, add, tanh, add per step (the final sum not counted)"),
        Workload("W6", f"GP neg. log marginal likelihood, RBF, {GP_N} 2-D points", build_w6,
                 inputs_w6, (0, 1), reference_w6, extra=("solve_triangular",),
                 torch_build=torch_build_w6),
        Workload("W7", f"FFT convolution loss, {FFT_SIZE}x{FFT_SIZE} image, {FFT_KERNEL}x{FFT_KERNEL} kernel, "
                 "rfft2/irfft2, MSE", build_w7, inputs_w7, (0, 1), reference_w7),
        Workload("W7p", f"W7 with the kernel zero-padded to {FFT_SIZE}x{FFT_SIZE} beforehand (rfft2 of the "
                 "full array)", build_w7p, inputs_w7p, (0, 1), reference_w7p),
    ]
}


# ---------------------------------------------------------------------------------------------
# Comparing results
# ---------------------------------------------------------------------------------------------


def flatten(tree):
    """The leaves of nested lists/tuples, in order, as numpy values (float or ndarray)."""
    if isinstance(tree, (list, tuple)):
        out = []
        for t in tree:
            out.extend(flatten(t))
        return out
    return [tree]


def relative_error(x, ref):
    """max |x - ref| / max |ref| (absolute error where ref is all zero)."""
    x = np.asarray(x, dtype=float)
    ref = np.asarray(ref, dtype=float)
    if x.shape != ref.shape:
        return math.inf
    if x.size == 0:
        return 0.0
    err = float(np.max(np.abs(x - ref)))
    scale = float(np.max(np.abs(ref)))
    if not math.isfinite(err):
        return math.inf
    return err / scale if scale > 0 else err


def compare(value, grads, ref_value, ref_grads, rtol=1e-6):
    """Problems found comparing (value, grads) with the reference; [] when all agree to `rtol`."""
    problems = []
    e = relative_error(value, ref_value)
    if not e <= rtol:
        problems.append(f"value {float(np.asarray(value)):.17g} vs reference {ref_value:.17g} "
                        f"(relative error {e:.2e})")
    leaves, ref_leaves = flatten(grads), flatten(ref_grads)
    if len(leaves) != len(ref_leaves):
        problems.append(f"{len(leaves)} gradient leaves, the reference has {len(ref_leaves)}")
        return problems
    for i, (g, r) in enumerate(zip(leaves, ref_leaves)):
        if np.shape(g) != np.shape(r):
            problems.append(f"gradient leaf {i}: shape {np.shape(g)}, reference {np.shape(r)}")
            continue
        e = relative_error(g, r)
        if not e <= rtol:
            problems.append(f"gradient leaf {i} (shape {np.shape(r)}): relative error {e:.2e}")
    return problems
