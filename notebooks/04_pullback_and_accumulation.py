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
# # 4. Pullbacks, accumulation, structures and a training loop
#
# ## `pullback` and `back`
#
# `tapegrad.pullback(f, *args)` runs the forward pass once and returns the value and
# `back`, the reverse sweep ready to run. `back(dy)` runs it from the seed `dy` and returns
# the tangent of `f` itself followed by one tangent per argument. It can be called again
# with another seed without recording the forward pass again:

# %% name="pullback"
import numpy as np
import tapegrad

def f(a, b):
    return a / (a + b * b)

y, back = tapegrad.pullback(f, 2.0, 3.0)
print(y)
print(back(1.0))
print(back(2.0))

# %% [markdown]
# `grad(f, *args)` is exactly `pullback` followed by `back()` with the seed 1.
#
# ## Nothing arrives: `None` and `ZeroTangent()`
#
# During the sweep, a value that no pullback has reached has no entry in the dictionary of
# derivatives (`None`: no share yet). The first share is set, later ones are added. When the
# sweep ends, an input that is still missing gets `ZeroTangent()`: no path from it reaches
# the result. Here `y` is never used:

# %% name="zero"
_, back = tapegrad.pullback(lambda x, y: x * x, 2.0, 5.0)
print(back(1.0))
for v in back.tape.inputs[1:]:   # the inputs x and y, and what the sweep left for them
    d = back.derivatives.get(v)
    print(v, back.tape[v].note, d if d is None else d.op.val)

# %% [markdown]
# `ZeroTangent()` is the zero of tangents: `tapegrad.extend.accum`, the "add" of set-or-add, treats
# it as nothing, and so do `+` and `*`. The sweep never has to build an array of zeros for a
# value that no path reaches. When you do need zeros (to update parameters, say),
# `tapegrad.fill_zeros` makes them in the shape of the argument:

# %% name="accum"
Z = tapegrad.ZeroTangent()
print(tapegrad.extend.accum(Z, 2.5), tapegrad.extend.accum(2.5, Z), Z + 2.5, 3 * Z)
print(tapegrad.extend.accum((1.0, Z), (Z, 2.0)))
params = {"w": 2.0, "unused": np.ones(2)}
_, (_, dparams) = tapegrad.grad(lambda p: p["w"] ** 2, params)
print(dparams)
print(tapegrad.fill_zeros(dparams, params))

# %% [markdown]
# ## Tuples and dicts
#
# A function may return a tuple or a dict. Its seed then has the same structure: one seed per
# entry, saying how much of each entry goes into the derivative. `(1, 0)` picks the first
# entry; `(1, 1)` differentiates their sum.

# %% name="structured-results"
y, back = tapegrad.pullback(lambda x: (x * x, np.sin(x)), 1.0)
print(back((1.0, 0.0))[1], back((0.0, 1.0))[1], back((1.0, 1.0))[1])

y, back = tapegrad.pullback(lambda x: {"square": x * x, "cube": x ** 3}, 2.0)
print(back({"square": 1.0, "cube": 0.5})[1])

# %% [markdown]
# Without a seed the error says what to pass:

# %% name="seed-error"
try:
    tapegrad.grad(lambda x: {"square": x * x, "cube": x ** 3}, 2.0)
except tapegrad.SeedError as e:
    print("SeedError:", e)

# %% [markdown]
# Arguments can be structured too. The gradient of a dict of parameters is a dict with the
# same keys; each number and float array inside is an input of the tape, named by its path:

# %% name="dict-params"
params = {"w": np.array([1.0, 2.0]), "b": 0.5}
x = np.array([3.0, 4.0])
value, (_, dparams, dx) = tapegrad.grad(lambda p, x: np.sum(p["w"] * x) + p["b"], params, x)
print(value, dparams, dx)
print(tapegrad.trace(lambda p, x: np.sum(p["w"] * x) + p["b"], params, x)[1])


# %% [markdown]
# ## A polynomial model
#
# A model is often an object holding its parameters. `Polynomial` evaluates
# `w0 + w1 x + w2 x² + w3 x³` by Horner's rule, `w0 + x (w1 + x (w2 + x w3))`. Its gradient
# is a `Tangent[Polynomial]` with one field per attribute:

# %% name="polynomial"
class Polynomial:
    def __init__(self, weights):
        self.weights = weights

    def __call__(self, x):
        out = self.weights[-1] * np.ones_like(x)
        for w in self.weights[-2::-1]:
            out = out * x + w
        return out

model = Polynomial(np.array([3.0, 2.0, -3.0, 1.0]))
x = np.array([1.0, 2.0, 3.0, 4.0])
loss, (_, dmodel, dx) = tapegrad.grad(lambda m, x: np.sum(m(x) ** 2), model, x)
print(dmodel)
p = model(x)
print(np.array([np.sum(2 * p * x ** i) for i in range(4)]))   # by hand: Σ 2 p(x) xⁱ


# %% [markdown]
# ## Training
#
# Fit the weights to samples of a cubic by gradient descent. `tapegrad.update(model, g,
# lr=...)` returns a new model with each parameter moved to `p - lr * g`; the old model is
# not changed.

# %% name="training"
def mse(model, x, y):
    return np.mean((model(x) - y) ** 2)

x = np.linspace(-1.0, 1.0, 21)
y = 1.0 - 2.0 * x + 0.5 * x ** 2 + 1.0 * x ** 3
model = Polynomial(np.zeros(4))
losses = []
for step in range(200):
    loss, (_, g, _, _) = tapegrad.grad(mse, model, x, y)
    losses.append(loss)
    model = tapegrad.update(model, g, lr=0.5)

print(f"loss {losses[0]:.4f} -> {losses[-1]:.2e}, {losses[0] / losses[-1]:.0f}x lower")
print("weights", np.round(model.weights, 3))

# %% [markdown]
# The weights approach `[1, -2, 0.5, 1]`. The plot of the loss uses matplotlib if it is
# installed (drawn in memory with the Agg backend, then shown as an image); without it the
# losses are printed.

# %% name="plot"
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

if plt is None:
    for step in range(0, len(losses), 25):
        print(f"step {step:3d}  loss {losses[step]:.3e}")
else:
    import io
    from IPython.display import Image, display

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.semilogy(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("mean squared error")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    display(Image(buffer.getvalue()))

# %% [markdown]
# **Exercise.**
# 1. Call `back` from `tapegrad.pullback(lambda x: np.sin(x), np.linspace(0, 1, 4))` with
#    each unit vector as the seed. What do you get, and why does `back()` without a seed
#    refuse?
# 2. Add a field `name = "cubic"` to the model and train again: what is the gradient's
#    `name` field?
# 3. Train with `lr=1.5`. What happens to the loss, and why? Find the largest learning rate
#    that still converges.
