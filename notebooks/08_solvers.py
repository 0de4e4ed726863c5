# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 8. Gradients through SciPy's solvers
#
# A scientist's model is rarely one formula: it finds an equilibrium with `brentq`, fits
# something inside with `minimize`, runs dynamics with `solve_ivp`, takes an expected value
# with `quad`. Differentiating through a solver's *iterations* would be slow and wrong in
# principle: the derivative of the iterates is not the derivative of the solution.
# `tapegrad.scipy` has scipy's solvers under their own names and arguments; each lets scipy
# solve on plain numbers and records **one** op whose rule differentiates the *solution*:
#
# * a root or a minimum by the implicit function theorem,
# * an ODE's solution by the adjoint method (reverse) or forward sensitivities (forward),
# * an integral under the integral sign, and at its limits by Leibniz's rule.
#
# We start small, with the cube root of `a` found by `brentq`.

# %% name="root"
import numpy as np
import scipy.integrate
import scipy.optimize
import tapegrad
from tapegrad.scipy.integrate import quad, solve_ivp
from tapegrad.scipy.optimize import brentq, minimize

def cube_root(a):
    return brentq(lambda t: t ** 3 - a, 0.0, 5.0, xtol=1e-14)

x, tape = tapegrad.trace(cube_root, 2.0)
print(tape)
print(round(tapegrad.gradient(cube_root, 2.0)[0], 12), round(2.0 ** (-2 / 3) / 3, 12))

# %% [markdown]
# The whole search is the one op `implicit_solution`: its problem (the function, the bracket)
# is a constant, `a` its input. At the root, `f(x, a) = x³ - a = 0`, so
# `∂f/∂x dx + ∂f/∂a da = 0` and `dx/da = -(∂f/∂a)/(∂f/∂x) = 1/(3x²)`: that is what the rule
# computes, with tapegrad's own derivatives of `f`, never scipy's iterations. It agrees
# with the closed form `a^(-2/3)/3` above.
#
# ## Fitting an ODE model: Lotka–Volterra
#
# Prey `u` and predators `v`: `u' = a u - b u v`, `v' = d u v - c v`. We observe both, with 5%
# noise, at 20 times, and want `(a, b, c, d)` back. The data come from scipy itself.

# %% name="data"
def lotka_volterra(t, y, a, b, c, d):
    prey, predator = y[0], y[1]
    return np.stack([a * prey - b * prey * predator, d * prey * predator - c * predator])

true = np.array([1.0, 0.5, 1.5, 0.75])
y0 = np.array([2.0, 1.0])
times = np.linspace(0.5, 10.0, 20)
clean = scipy.integrate.solve_ivp(lotka_volterra, (0.0, 10.0), y0, t_eval=times, args=tuple(true),
                                  rtol=1e-8, atol=1e-8).y
observed = clean * np.exp(0.05 * np.random.default_rng(0).normal(size=clean.shape))
print(observed.shape)
print(observed[:, :5].round(2))

# %% [markdown]
# The loss calls `tapegrad.scipy.integrate.solve_ivp` with the same arguments scipy's takes.
# Traced, it is one `ivp_solution` op (scipy solves the state forward; the gradient solves
# the adjoint equations backward with scipy, reading the forward solution from its dense
# output), followed by the numpy of the loss:

# %% name="loss"
def loss(theta):
    sol = solve_ivp(lotka_volterra, (0.0, 10.0), y0, t_eval=times, args=tuple(theta[i] for i in range(4)),
                    rtol=1e-7, atol=1e-9)
    return np.mean((sol.y - observed) ** 2)

theta0 = np.array([0.8, 0.6, 1.2, 0.6])
value, tape = tapegrad.trace(loss, theta0)
print(tape)

# %% [markdown]
# Its gradient (the adjoint) against central differences of the loss itself:

# %% name="loss-gradient"
value, (_, g) = tapegrad.grad(loss, theta0)
h = 1e-5
numeric = np.array([(loss(theta0 + h * e) - loss(theta0 - h * e)) / (2 * h) for e in np.eye(4)])
print(round(value, 6))
print(g.round(5))
print(numeric.round(5))

# %% [markdown]
# scipy's `minimize` takes the value and the gradient together (`jac=True`): L-BFGS-B, with
# each gradient one forward solve and one backward (adjoint) solve, finds the parameters
# again, within the noise.

# %% name="fit"
def value_and_gradient(theta):
    value, (_, g) = tapegrad.grad(loss, theta)
    return value, g

fit = scipy.optimize.minimize(value_and_gradient, theta0, jac=True, method="L-BFGS-B", bounds=[(0.05, 5.0)] * 4)
print(fit.success)
print("fitted", fit.x.round(2))
print("true  ", true)

# %% [markdown]
# ## A bilevel problem: choosing a ridge penalty by validation loss
#
# The inner problem fits ridge regression weights on a training set with
# `tapegrad.scipy.optimize.minimize`; the outer loss is the error of those weights on a
# validation set, a function of the penalty λ (we work with `log λ`). The weights `w*(λ)`
# are a minimizer, so their derivative comes from the optimality condition
# `∇_w f(w*, λ) = 0`: no differentiating through BFGS. Ridge has a closed form, which lets us
# check the gradient.

# %% name="bilevel"
rng = np.random.default_rng(1)
X = rng.normal(size=(30, 8))
y = X @ (rng.normal(size=8) * (rng.uniform(size=8) < 0.5)) + 0.8 * rng.normal(size=30)
X_train, y_train, X_val, y_val = X[:15], y[:15], X[15:], y[15:]

def weights(log_lam):
    lam = np.exp(log_lam)
    def penalized(w):
        return np.sum((X_train @ w - y_train) ** 2) + lam * np.sum(w ** 2)
    return minimize(penalized, np.zeros(8), jac=lambda w: tapegrad.gradient(penalized, w)[0],
                    method="BFGS", options={"gtol": 1e-10}).x

def validation(log_lam):
    return np.mean((X_val @ weights(log_lam) - y_val) ** 2)

def validation_closed_form(log_lam):
    w = np.linalg.solve(X_train.T @ X_train + np.exp(log_lam) * np.eye(8), X_train.T @ y_train)
    return np.mean((X_val @ w - y_val) ** 2)

print(round(tapegrad.gradient(validation, 0.0)[0], 7), round(tapegrad.gradient(validation_closed_form, 0.0)[0], 7))

# %% [markdown]
# The outer problem is one more scipy `minimize`, its gradient passing through the inner one:

# %% name="outer"
def outer_value_and_gradient(z):
    value, (_, g) = tapegrad.grad(validation, float(z[0]))
    return value, np.array([g])

outer = scipy.optimize.minimize(outer_value_and_gradient, np.zeros(1), jac=True, method="L-BFGS-B")
print("best penalty", round(float(np.exp(outer.x[0])), 3), "validation loss", round(outer.fun, 4))
print("no penalty  ", round(validation_closed_form(np.log(1e-8)), 4))

# %% [markdown]
# ## An expected value with `quad`
#
# For X ~ Normal(μ, σ), E[X²] = μ² + σ², an integral over the whole line that `quad`
# computes. Its derivative in μ and σ is the integral of the derivative of the integrand
# (tapegrad integrates the vector-Jacobian product with scipy's `quad_vec`); had the limits
# been traced, they would get the integrand at the limit. The tape holds one `quad_value`.

# %% name="quad"
def second_moment(mu, sigma):
    density = lambda x: np.exp(-(x - mu) ** 2 / (2 * sigma ** 2)) / (sigma * np.sqrt(2 * np.pi))
    return quad(lambda x: x ** 2 * density(x), -np.inf, np.inf)[0]

value, tape = tapegrad.trace(second_moment, 0.3, 1.2)
print(tape)
print(round(value, 10), "=", 0.3 ** 2 + 1.2 ** 2)
print(np.round(tapegrad.gradient(second_moment, 0.3, 1.2), 10), "=", (2 * 0.3, 2 * 1.2))

# %% [markdown]
# **Exercise.** The Lotka–Volterra fit above also needs the initial state, which we gave it.
# Make `y0` a parameter too (pass `theta[4:]` as `y0` to `solve_ivp`) and fit all six numbers;
# then compare the adjoint gradient with forward mode, `tapegrad.jacobian(loss, theta,
# mode="fwd")`, which integrates the sensitivities alongside the state.
