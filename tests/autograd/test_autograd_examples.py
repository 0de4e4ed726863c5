"""autograd's example programs, written afresh in small form as autograd users write them, run
under tapegrad.autograd (only the import prefix changes) and checked: against what they must
compute, and against the same program run under autograd itself where it is installed."""
import importlib

import numpy as onp
import pytest
import scipy.optimize

from tapegrad.autograd.misc.fixed_points import fixed_point
from _autograd_fixtures import restore_rule_tables  # noqa: F401  (autouse: the rule tables restored after each test)

#: the rules of tapegrad's own these tests drive (tests/rules/test_coverage.py reads it)
EXERCISED = [fixed_point]


def _newton_sqrt(a):
    return lambda x: 0.5 * (x + a / x)


def _fixed_point_loss(a, b):
    """√a · b + √(a b), each root a fixed point of Newton's iteration."""
    def close(x, y):
        return onp.abs(x - y)
    return (fixed_point(_newton_sqrt, a, 1.0, close, 1e-13) * b
            + fixed_point(_newton_sqrt, a * b, 1.0, close, 1e-13))


#: fixed_point's implicit derivative at second order, in every combination of modes (the
#: conformance layer, tests/conformance, runs it through every entry point)
ORDER2 = [(fixed_point, _fixed_point_loss, (2.0, 1.5))]


def load(prefix, *names):
    """The modules `prefix + name` (``import autograd.numpy as np`` and friends)."""
    if prefix == "autograd":
        pytest.importorskip("autograd")
    return [importlib.import_module(f"{prefix}{name}") for name in names]


# --- a neural net trained with adam (autograd's examples/neural_net.py) ---


def neural_net(prefix):
    ag, np, opt, special = load(prefix, "", ".numpy", ".misc.optimizers", ".scipy.special")
    rs = onp.random.RandomState(0)
    inputs = rs.randn(40, 3)
    targets = (inputs[:, 0] + inputs[:, 1] ** 2 > 0.5).astype(int)
    onehot = onp.eye(2)[targets]

    def init_params(scale, sizes):
        return [(scale * rs.randn(m, n), scale * rs.randn(n)) for m, n in zip(sizes[:-1], sizes[1:])]

    def predict(params, x):
        for W, b in params:
            outputs = np.dot(x, W) + b
            x = np.tanh(outputs)
        return outputs - special.logsumexp(outputs, axis=1, keepdims=True)

    def objective(params, i):
        prior = -0.01 * sum(np.sum(W ** 2) + np.sum(b ** 2) for W, b in params)
        return -(prior + np.sum(predict(params, inputs) * onehot))

    seen = []
    params = opt.adam(ag.grad(objective), init_params(0.1, [3, 8, 2]), step_size=0.05, num_iters=60,
                      callback=lambda p, i, g: seen.append(objective(p, i)))
    accuracy = onp.mean(onp.argmax(predict(params, inputs), axis=1) == targets)
    return seen, objective(params, 0), accuracy


# --- black-box stochastic variational inference (examples/black_box_svi.py) ---


def black_box_svi(prefix):
    ag, np, npr, norm, mvn, opt = load(prefix, "", ".numpy", ".numpy.random", ".scipy.stats.norm",
                                       ".scipy.stats.multivariate_normal", ".misc.optimizers")

    def log_density(x):  # a banana-shaped target
        mu, log_sigma = x[:, 0], x[:, 1]
        return norm.logpdf(log_sigma, 0, 1.35) + norm.logpdf(mu, 0, np.exp(log_sigma))

    def gaussian_entropy(log_std):
        return 0.5 * 2 * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = npr.RandomState(0)

    def variational_objective(params, t):
        mean, log_std = params[:2], params[2:]
        samples = rs.randn(50, 2) * np.exp(log_std) + mean
        return -(gaussian_entropy(log_std) + np.mean(log_density(samples)))

    gradient = ag.grad(variational_objective)
    g0 = gradient(onp.array([0.1, -0.2, -1.0, -1.0]), 0)
    rs = npr.RandomState(1)
    params = opt.adam(gradient, onp.array([-1.0, -1.0, -5.0, -5.0]), step_size=0.1, num_iters=100)
    mvn_check = mvn.logpdf(params[:2], onp.zeros(2), onp.eye(2))
    return g0, params, mvn_check


# --- a Gaussian process's marginal likelihood, fitted with scipy.optimize (examples/gaussian_process.py) ---


def gaussian_process(prefix):
    ag, np, mvn = load(prefix, "", ".numpy", ".scipy.stats.multivariate_normal")
    X = onp.linspace(-3, 3, 12)[:, None]
    y = onp.sin(X[:, 0]) + 0.1 * onp.cos(7 * X[:, 0])

    def rbf(params, x, xp):
        output_scale = np.exp(params[0])
        lengthscales = np.exp(params[1:])
        diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
        return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))

    def log_marginal_likelihood(params):
        mean, noise_scale = params[0], np.exp(params[1]) + 0.0001
        cov = rbf(params[2:], X, X) + noise_scale * np.eye(len(y))
        return mvn.logpdf(y, mean * np.ones(len(y)), cov)

    objective = lambda params: -log_marginal_likelihood(params)  # noqa: E731
    x0 = onp.array([0.0, -1.0, 0.0, 0.0])
    g0 = ag.grad(objective)(x0)
    fit = scipy.optimize.minimize(ag.value_and_grad(objective), x0, jac=True, method="CG")
    return g0, fit.fun


# --- a recurrent neural net (examples/rnn.py) ---


def rnn(prefix):
    ag, np, special, flat = load(prefix, "", ".numpy", ".scipy.special", ".misc.flatten")
    rs = onp.random.RandomState(0)
    state, inp, out = 4, 3, 3
    params = {"init hiddens": 0.1 * rs.randn(1, state),
              "change": 0.1 * rs.randn(inp + state + 1, state),
              "predict": 0.1 * rs.randn(state + 1, out)}
    seqs = onp.eye(3)[rs.randint(0, 3, size=(6, 2))]  # (time, batch, one-hot)

    def hiddens_to_output_probs(predict_params, hiddens):
        output = np.dot(np.concatenate((hiddens, np.ones((hiddens.shape[0], 1))), axis=1), predict_params)
        return output - special.logsumexp(output, axis=1, keepdims=True)

    def rnn_predict(params, inputs):
        num_sequences = inputs.shape[1]
        hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
        output = [hiddens_to_output_probs(params["predict"], hiddens)]
        for x in inputs:
            joined = np.concatenate((x, hiddens, np.ones((num_sequences, 1))), axis=1)
            hiddens = np.tanh(np.dot(joined, params["change"]))
            output.append(hiddens_to_output_probs(params["predict"], hiddens))
        return output

    def loss(params):
        logprobs = rnn_predict(params, seqs)
        return -sum(np.sum(lp * t) for lp, t in zip(logprobs[:-1], seqs))

    flat_loss, unflatten, x0 = flat.flatten_func(lambda p: loss(p), params)
    g = ag.grad(flat_loss)(x0)
    return loss(params), g, x0


# --- a fixed point and its implicit derivative (examples/fixed_points.py) ---


def fixed_point_sqrt(prefix):
    ag, np, fp = load(prefix, "", ".numpy", ".misc.fixed_points")

    def newton_sqrt_iter(a):
        return lambda x: 0.5 * (x + a / x)

    def distance(x, y):
        return np.abs(x - y)

    def sqrt(a, guess=10.0):
        return fp.fixed_point(newton_sqrt_iter, a, guess, distance, 1e-10)

    return sqrt(2.0), ag.grad(sqrt)(2.0), ag.grad(ag.grad(lambda a: 3.0 * sqrt(a)))(2.0) if prefix != "autograd" else None


# --- a primitive of the user's own with defvjp and defjvp (examples/define_gradient.py) ---


def custom_primitive(prefix):
    ag, np, extend, test_util = load(prefix, "", ".numpy", ".extend", ".test_util")

    @extend.primitive
    def logsumexp(x):
        max_x = np.max(x)
        return max_x + np.log(np.sum(np.exp(x - max_x)))

    def logsumexp_vjp(ans, x):
        x_shape = x.shape
        return lambda g: np.full(x_shape, g) * np.exp(x - np.full(x_shape, ans))

    extend.defvjp(logsumexp, logsumexp_vjp)
    extend.defjvp(logsumexp, lambda g, ans, x: np.sum(g * np.exp(x - ans)))

    def example_func(y):
        z = y ** 2
        lse = logsumexp(z)
        return np.sum(lse)

    x = onp.array([0.5, -1.0, 2.0])
    test_util.check_grads(example_func, modes=["rev", "fwd"], order=2)(x)
    return ag.grad(example_func)(x), ag.make_jvp(example_func)(x)(onp.ones(3))[1]


# --- a convolution over channels (examples/convnet.py's layer) ---


def conv_layer(prefix):
    ag, np, signal = load(prefix, "", ".numpy", ".scipy.signal")
    rs = onp.random.RandomState(0)
    inputs = rs.randn(2, 3, 6, 5)  # (batch, input channels, rows, columns)
    filters = rs.randn(3, 4, 3, 2)  # (input channels, output channels, rows, columns)

    def layer(filters, inputs, mode):
        conv = signal.convolve(inputs, filters, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode=mode)
        return np.sum(np.tanh(conv) ** 2), conv.shape

    value = {m: layer(filters, inputs, m) for m in ("valid", "full")}
    g = ag.grad(lambda w: layer(w, inputs, "valid")[0])(filters)
    return value["valid"][0], value["valid"][1], value["full"][0], value["full"][1], g


PROGRAMS = [neural_net, black_box_svi, gaussian_process, rnn, fixed_point_sqrt, custom_primitive, conv_layer]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_gives_autograds_numbers(program):
    """The program run under tapegrad.autograd gives what it gives under autograd, to rounding."""
    ours = program("tapegrad.autograd")
    theirs = program("autograd")
    for a, b in zip(ours, theirs):
        if b is not None:
            onp.testing.assert_allclose(onp.asarray(a, dtype=float) if not isinstance(a, tuple) else a, b,
                                        rtol=1e-7, atol=1e-9)


def test_neural_net_learns():
    """adam with autograd's callback lowers the loss and fits the training data."""
    seen, final, accuracy = neural_net("tapegrad.autograd")
    assert len(seen) == 60 and final < 0.5 * seen[0] and accuracy >= 0.9


def test_black_box_svi_finds_the_mode_region():
    """The variational mean moves from (-1, -1) towards the banana's mass, its log scales grow."""
    _, params, _ = black_box_svi("tapegrad.autograd")
    assert onp.all(params[2:] > -4.0) and abs(params[0]) < 1.0


def test_gp_gradient_matches_differences_and_fit_improves():
    """The GP objective's gradient is finite, and CG with value_and_grad lowers the objective."""
    g0, best = gaussian_process("tapegrad.autograd")
    assert onp.all(onp.isfinite(g0)) and best < 12.0


def test_rnn_gradient_matches_differences():
    """The RNN's flat gradient (flatten_func) matches central differences of its loss."""
    loss0, g, x0 = rnn("tapegrad.autograd")
    assert loss0 == pytest.approx(rnn_loss_at("tapegrad.autograd", x0))
    f = lambda v: rnn_loss_at("tapegrad.autograd", v)  # noqa: E731
    eps = 1e-6
    num = onp.array([(f(x0 + eps * e) - f(x0 - eps * e)) / (2 * eps) for e in onp.eye(x0.size)])
    onp.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)


def rnn_loss_at(prefix, v):
    """The RNN example's loss at flat parameters `v` (plain numpy, for differences)."""
    (flat,) = load(prefix, ".misc.flatten")
    rs = onp.random.RandomState(0)
    state, inp, out = 4, 3, 3
    params = {"init hiddens": 0.1 * rs.randn(1, state), "change": 0.1 * rs.randn(inp + state + 1, state),
              "predict": 0.1 * rs.randn(state + 1, out)}
    seqs = onp.eye(3)[rs.randint(0, 3, size=(6, 2))]
    p = flat.flatten(params)[1](v)
    hid = onp.repeat(p["init hiddens"], 2, axis=0)
    total = 0.0
    for x, t in zip(seqs, seqs):
        o = onp.concatenate((hid, onp.ones((2, 1))), axis=1) @ p["predict"]
        lp = o - scipy.special.logsumexp(o, axis=1, keepdims=True)
        total -= onp.sum(lp * t)
        hid = onp.tanh(onp.concatenate((x, hid, onp.ones((2, 1))), axis=1) @ p["change"])
    return total


def test_fixed_point_derivatives_are_those_of_sqrt():
    """fixed_point's implicit derivative is d√a/da = 1/(2√a), and its second derivative too."""
    value, d1, d2 = fixed_point_sqrt("tapegrad.autograd")
    assert value == pytest.approx(onp.sqrt(2.0))
    assert d1 == pytest.approx(0.5 / onp.sqrt(2.0), rel=1e-8)
    assert d2 == pytest.approx(3.0 * -0.25 * 2.0 ** -1.5, rel=1e-6)


def test_custom_primitive_uses_its_rules():
    """defvjp's and defjvp's rules give logsumexp's gradient, e^{x_i - lse} · 2y."""
    g, jv = custom_primitive("tapegrad.autograd")
    y = onp.array([0.5, -1.0, 2.0])
    soft = onp.exp(y ** 2 - scipy.special.logsumexp(y ** 2))
    onp.testing.assert_allclose(g, 2 * y * soft)
    assert jv == pytest.approx(onp.sum(2 * y * soft))


def test_conv_layer_shapes_are_autograds():
    """convolve with axes and dot_axes gives (batch, output channels, rows, columns)."""
    _, valid_shape, _, full_shape, _ = conv_layer("tapegrad.autograd")
    assert valid_shape == (2, 4, 4, 4) and full_shape == (2, 4, 8, 6)
