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
# # 7. Reading a gradient of real code
#
# The earlier notebooks took the machinery apart on scalars. Here we put it back together
# on the kind of code people differentiate every day: a small neural network, written in
# plain numpy, with its parameters in a dict. We read its gradient five ways: the tape,
# the worked backward pass, a picture, the generated Python program, and a check against
# finite differences.

# %% name="model"
import numpy as np
import tapegrad

rng = np.random.default_rng(0)
X = rng.normal(size=(4, 2)).round(2)           # 4 examples, 2 features
Y = np.array([[0.5], [-1.0], [1.0], [0.0]])    # 4 targets
params = {"W1": rng.normal(size=(2, 3)).round(2), "b1": np.zeros(3),
          "W2": rng.normal(size=(3, 1)).round(2), "b2": 0.0}

def loss(p):
    h = np.tanh(X @ p["W1"] + p["b1"])         # hidden layer: 4 x 3
    out = h @ p["W2"] + p["b2"]                # prediction: 4 x 1
    return np.mean((out - Y) ** 2)

print(loss(params))

# %% [markdown]
# ## The tape
#
# `X` and `Y` are globals, so they are constants of the tape (shown by type and shape); the
# four parameters are its inputs, named by their place in the dict. Each line is one numpy
# call, with the type and shape of its value.

# %% name="tape"
value, tape = tapegrad.trace(loss, params)
print(tape)

# %% [markdown]
# ## The backward pass, worked by hand
#
# `explain` names every value as the tape above does (`%2` is `W1`, `%8` the hidden layer
# `tanh(...)`), the constant array `X` `c1`, and writes each adjoint `d%k` (the derivative of
# the loss with respect to `%k`) with the formula that makes it. Three things to look for:
#
# * the two matrix products: `d%8 = d%9 · %4ᵀ` and `d%4 = %8ᵀ · d%9`;
# * `b1` was added to every row of a 4 × 3 matrix, so its adjoint is that matrix's adjoint
#   *summed over axis 0*: the broadcast in the forward pass becomes a sum in the backward
#   pass;
# * `b2` (a scalar) was broadcast over both axes, so it sums over both.

# %% name="explain"
tapegrad.explain(loss, params)

# %% [markdown]
# ## The picture
#
# The same sweep as a graph: forward ops in blue, the seed and the pullbacks in dashed
# orange, each with its value and type (here the tape of `pullback`, where every pullback
# is a call of its own). `.save("mlp.svg")` would write it to a file.

# %% name="draw"
_, back = tapegrad.pullback(loss, params)
back(1.0)
tapegrad.draw(back.tape)

# %% [markdown]
# ## The gradient as a program
#
# `compiled_grad` traces the whole computation, forward and backward, simplifies it and
# writes it as Python: a program you could have written by hand. The last line returns the
# value and the gradient, which has the structure of the argument: a dict.

# %% name="source"
grad_loss = tapegrad.compiled_grad(loss)
print(grad_loss.source(params))

# %% [markdown]
# Read the backward half against the explain output: `np.swapaxes(p_W2, -1, -2)` is `W2ᵀ`,
# `np.sum(..., axis=(0,))` is the sum that undoes the broadcast of `b1`, and `1 - v8 * v8`
# is the derivative of `tanh`.
#
# ## Checking against finite differences
#
# A gradient is only as good as its check. The central difference
# `(L(p + h·e) - L(p - h·e)) / 2h` along one weight should agree with that entry of the
# gradient to about 1e-9; `tapegrad.check_grad` does the same along a random direction
# through every parameter at once, and raises if they disagree.

# %% name="check"
value, (df, dp) = grad_loss(params)            # df: the gradient with respect to loss itself
h, e = 1e-6, np.zeros((2, 3))
e[0, 0] = 1.0                                  # the direction of the weight W1[0, 0]
up, down = {**params, "W1": params["W1"] + h * e}, {**params, "W1": params["W1"] - h * e}
central = (loss(up) - loss(down)) / (2 * h)
print(f"dL/dW1[0, 0]: reverse mode {dp['W1'][0, 0]:.10f}, central difference {central:.10f}")
tapegrad.check_grad(loss, params)
print("check_grad: reverse and forward mode agree with central differences")

# %% [markdown]
# **Exercise.**
# 1. Replace `np.tanh` by `np.maximum(z, 0)` (a ReLU). Which line of the explain output
#    changes, and what does it say happens at a tie `z == 0`?
# 2. Make `b1` a `(1, 3)` array instead of `(3,)`. Over which axes does explain now say the
#    adjoint of `b1` is summed, and why?
# 3. Take ten steps of gradient descent `p ← p - 0.1·∇L` with `grad_loss` and print the
#    loss after each; then call `grad_loss.cache_info()`. How many times was the program
#    traced?
