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
# # 3. Pullbacks, loops, closures, and a wrong rule
#
# ## A pullback is a Jacobian, transposed and applied
#
# For a primitive `y = f(x)` with Jacobian `J` (`J[i, j] = ∂y_i/∂x_j`), the pullback maps
# the derivative of the result with respect to `y`, a vector `ȳ`, to the derivative with
# respect to `x`: `x̄ = Jᵀ ȳ`. Call the rule of `np.sin` on a vector and pull back the unit
# vectors: `Jᵀ e_i` is row `i` of `J`, so the rows pulled back make up the Jacobian.

# %% name="sin-jacobian"
import numpy as np
import tapegrad
from tapegrad.gradcontext import GradContext

x = np.array([0.1, 0.2, 0.3])
y, sin_pullback = tapegrad.rrule(np.sin, x)
J = np.stack([sin_pullback(e)[1] for e in np.eye(3)])
print(J)
print(np.allclose(J, np.diag(np.cos(x))))

# %% [markdown]
# `sin` acts elementwise, so its Jacobian is diagonal, and the pullback never builds it: it
# computes `ȳ * cos(x)`, three multiplications instead of nine entries. A pullback is a
# recipe for `Jᵀ ȳ`, not a matrix. The pullback of `cos` is `ȳ · (−sin x)`, and like every
# pullback it is linear in `ȳ`:

# %% name="cos"
_, cos_pullback = tapegrad.rrule(np.cos, 0.5)
print(cos_pullback(1.0)[1], -np.sin(0.5))
print(cos_pullback(2.0)[1])

# %% [markdown]
# A primitive of two arguments has one tangent per argument. For numbers `a * b` the
# Jacobian is the row `[b, a]`, so the pullback returns `(ȳ · b, ȳ · a)`; for arrays,
# elementwise, `(ȳ * b, ȳ * a)`, each summed down to its argument's shape where numpy
# broadcast it. A rule may hand a tangent back as a `Thunk`, a tangent computed only when
# the sweep reads it: often one factor is a constant, and its tangent is never needed.
# tapegrad's rule for `multiply` does this for arrays that broadcast (here `b` has one
# element, spread over two); for two floats, or two arrays of one shape, it computes the
# products at once, which is cheaper (a gradient tells the rule which arguments are
# constants):

# %% name="multiply"
a, b = np.array([1.0, 2.0]), np.array([3.0])
_, mul_pullback = tapegrad.rrule(np.multiply, a, b)
tangents = mul_pullback(np.ones(2))
print(tangents)
print(*[t.fn() if isinstance(t, tapegrad.extend.Thunk) else t for t in tangents])


# %% [markdown]
# ## A loop, and its adjoint running backwards
#
# `power` multiplies `n` times. The tape holds one multiplication per turn of the loop,
# and the gradient tape calls their pullbacks in reverse order:

# %% name="power"
def power(x, n):
    r = 1.0
    for _ in range(n):
        r *= x
    return r

print(tapegrad.grad(power, 2.0, 3))
y, back = tapegrad.pullback(power, 2.0, 3)
back()
print(tapegrad.show.format_tape(back.tape, compact=True))

# %% [markdown]
# Read the backward half: the pullbacks `pb%7`, `pb%6`, `pb%5` of the three multiplications run
# last-first, and each hands a share of the derivative to `x` (`%2`), so `x` gets two
# `accum`s: `dx = 4 + 4 + 4 = 12 = 3x²`. The first multiplication is `1.0 * x`; its
# pullback's first tangent, for the constant `1.0`, is never read (`_`).
#
# The count `n` gets `NoTangent()`: an integer used as a loop count has no derivative. The
# tape also records the loop count it saw, as the **guard** `guard index(%3) == 3`: a tape
# is only valid for inputs that take the same path (the comment says where in the code the
# guard came from). Replaying checks the guards:

# %% name="guard"
_, tape = tapegrad.trace(power, 2.0, 3)
print(tape.replay(power, 5.0, 3))
try:
    tape.replay(power, 5.0, 4)
except tapegrad.GuardError as e:
    print("GuardError:", e)

# %% [markdown]
# ## Closures have gradients with fields
#
# A function can carry numbers of its own. `make_scale(3.0)` returns a function that
# remembers `a = 3.0`; its gradient with respect to itself (the first entry of `grad`'s
# tuple, `ZeroTangent()` so far) is now a `Tangent` with one field per captured variable:

# %% name="closure"
make_scale = lambda a: (lambda x: x * a)
f = make_scale(3.0)
value, (df, dx) = tapegrad.grad(f, 2.0)
print(value, df, dx)
print(df.a, df.fields)
print(tapegrad.trace(f, 2.0)[1])


# %% [markdown]
# The captured `a` is an input of the tape like `x`, named `f.a`. This is how a model
# written as a closure (or as an object, notebook 4) gets gradients for its parameters.
#
# ## Debugging a wrong pullback
#
# A rule is code, and code has bugs. Here is `logistic`, a primitive with a rule that forgets
# a factor: the derivative of `s = 1/(1 + e^(-z))` is `s(1 − s)`, not `s`. Nothing fails:
# `grad` returns numbers, they are just wrong.

# %%
@tapegrad.primitive
def logistic(z):
    return 1 / (1 + np.exp(-z))

@tapegrad.rrule(logistic)
def logistic_rrule(z):
    s = logistic(z)
    def logistic_pullback(dy):
        return tapegrad.NO_TANGENT, dy * s   # wrong: should be dy * s * (1 - s)
    return s, logistic_pullback

def loss(w, x):
    p = logistic(np.tanh(w * x))
    return np.sum(np.log(1 + p ** 2))

w, x = 0.7, np.array([0.5, -1.0, 2.0])
print(tapegrad.grad(loss, w, x)[1][1])


# %% [markdown]
# `tapegrad.check_grad` compares the gradient with central differences along a random
# direction and raises `AssertionError` when they disagree:

# %% name="check-loss"
def check(name, fn, *args):
    try:
        tapegrad.check_grad(fn, *args)
        print(f"{name:<14} ok")
    except AssertionError as e:
        print(f"{name:<14} FAILS: {e}")

check("loss", loss, w, x)

# %% [markdown]
# Something is wrong, but where? Narrow it down: the gradient tape lists every primitive
# call together with the values it was called with, so each call can be checked on its own
# with exactly those values.

# %% name="narrow"
_, tape = tapegrad.trace(loss, w, x, ctx=GradContext())
for op in tape:
    if isinstance(op, tapegrad.tape.Call) and op.fn is tapegrad.rrule:
        fn, *args = op.args
        values = [a.op.val if isinstance(a, tapegrad.tape.Variable) else a for a in args]
        check(f"{op.var} {fn.__name__}", lambda *v: fn(*v), *values)


# %% [markdown]
# Only `logistic` fails. Fix its rule (registering again replaces it) and check again:

# %% name="fixed"
@tapegrad.rrule(logistic)
def logistic_rrule(z):
    s = logistic(z)
    def logistic_pullback(dy):
        return tapegrad.NO_TANGENT, dy * s * (1 - s)
    return s, logistic_pullback

check("logistic", logistic, np.tanh(w * x))
check("loss", loss, w, x)
# (central differences agree to about 8 digits: more would show this machine's rounding)
print(f"{tapegrad.grad(loss, w, x)[1][1]:.8f} {tapegrad.ngradient(loss, w, x)[0]:.8f}")

# %% [markdown]
# **Exercise.**
# 1. Compute the Jacobian of `lambda v: v * v[::-1]` at `[1.0, 2.0, 3.0]` from its
#    pullback, one unit vector at a time (use `tapegrad.pullback` and `back(e)`). Is it
#    symmetric? Check one entry by hand.
# 2. Change `power` to `r = x; for _ in range(n - 1): r *= x`. Which line of the gradient
#    tape disappears, and why does `x` still get two `accum`s at `n = 3`?
# 3. Give `logistic` a rule whose pullback returns a tangent of the wrong *shape*
#    (`np.sum(dy * s * (1 - s))`) and read the error message: does it name the rule?
