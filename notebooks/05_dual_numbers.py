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
# # 5. Dual numbers and forward mode
#
# Forward mode carries, next to every value, its *variation*: how fast it changes when the
# inputs move in a chosen direction. A **dual number** `Dual(x, dx)` is such a pair, and
# numpy code runs on it unchanged: each operation computes its value and, by its forward
# rule, its variation.

# %% name="dual"
import numpy as np
import tapegrad
from tapegrad import Dual

x = Dual(0.5, 1.0)
print(x * np.sin(x))
print(0.5 * np.sin(0.5), np.sin(0.5) + 0.5 * np.cos(0.5))


# %% [markdown]
# One pass gives the value and the derivative along one direction. That is the opposite
# trade to reverse mode: one forward pass per *input*, against one reverse sweep per
# *output*.
#
# ## The Haaland friction factor, three ways
#
# The Haaland equation approximates the Darcy friction factor of pipe flow from the
# roughness `eps`, the diameter `D` and the Reynolds number `Re`:

# %% name="haaland"
def haaland(eps, D, Re):
    return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2

args = (0.01, 1.0, 3000.0)
print(haaland(*args))

# %% [markdown]
# **1. Dual numbers.** `tapegrad.jvp(f, args, tangents)` runs `f` on `Dual(arg, tangent)`
# and returns the value and the variation. Three inputs need three passes, one per unit
# direction:

# %% name="by-dual"
by_dual = []
for direction in np.eye(3):
    value, derivative = tapegrad.jvp(haaland, args, tuple(direction))
    by_dual.append(derivative)
print(*by_dual)


# %% [markdown]
# **2. By hand, in SSA form.** Write the function one primitive per line, each line a new
# name: this is the tape written by hand. The reverse sweep then goes through the lines from
# the last to the first, and the adjoint `b_k = ∂f/∂y_k` of each line is computed from the
# adjoints of the lines that use `y_k`:

# %% name="by-hand"
def haaland_forward(eps, D, Re):
    y1 = eps / D
    y2 = y1 / 3.7
    y3 = y2 ** 1.11
    y4 = 6.9 / Re
    y5 = y3 + y4
    y6 = np.log10(y5)
    y7 = -1.8 * y6
    y8 = y7 ** 2
    y9 = 1 / y8
    return y9, (y1, y2, y3, y4, y5, y6, y7, y8)

def haaland_backward(eps, D, Re):
    y9, (y1, y2, y3, y4, y5, y6, y7, y8) = haaland_forward(eps, D, Re)
    b9 = 1.0                          # the seed
    b8 = b9 * (-1 / y8 ** 2)          # y9 = 1/y8
    b7 = b8 * 2 * y7                  # y8 = y7²
    b6 = b7 * -1.8                    # y7 = -1.8 y6
    b5 = b6 / (y5 * np.log(10))       # y6 = log10(y5)
    b3, b4 = b5, b5                   # y5 = y3 + y4
    b2 = b3 * 1.11 * y2 ** 0.11       # y3 = y2^1.11
    b1 = b2 / 3.7                     # y2 = y1 / 3.7
    b_eps = b1 / D                    # y1 = eps / D
    b_D = -b1 * eps / D ** 2
    b_Re = b4 * (-6.9 / Re ** 2)      # y4 = 6.9 / Re
    return y9, (b_eps, b_D, b_Re)

value_by_hand, by_hand = haaland_backward(*args)
print(*by_hand)

# %% [markdown]
# **3. Reverse mode.** One sweep for all three:

# %% name="three-ways"
value_by_grad, (_, *by_grad) = tapegrad.grad(haaland, *args)

worst = 0.0
for name, d, h, g in zip(["eps", "D", "Re"], by_dual, by_hand, by_grad):
    print(f"d/d{name:<3}  dual {d: .15e}   hand {h: .15e}   grad {g: .15e}")
    worst = max(worst, abs(d - g) / abs(g), abs(h - g) / abs(g))
print(f"largest relative difference {worst:.1e}; agree to 1e-10: {worst < 1e-10}")

# %% [markdown]
# They agree to the last digit or two: all three apply the same chain rule, in different
# orders, so they differ only in rounding.
#
# ## A linear solve on dual numbers
#
# If the matrix of a linear system varies, `A(t) x(t) = b`, differentiating gives
# `dA x + A dx = 0`, so `dx = -A⁻¹ (dA x)`. `np.linalg.solve` on a dual matrix computes the
# value and this variation, reusing one factorization of `A` for both:

# %% name="solve"
A = np.array([[4.0, 1.0], [2.0, 3.0]])
dA = np.array([[0.0, 1.0], [0.0, 0.0]])
b = np.array([1.0, 2.0])

x = np.linalg.solve(Dual(A, dA), b)
print(x)
print(np.linalg.solve(A, b), -np.linalg.solve(A, dA @ np.linalg.solve(A, b)))


# %% [markdown]
# ## A removable singularity
#
# The thin-plate spline `φ(r) = r² log|r|` is used in interpolation. At `r = 0` the formula
# gives `0 · (−∞)`, but the limit is 0, and so is the limit of the derivative
# `2r log|r| + r`. The formula cannot be evaluated there, and neither can its derivative:

# %% name="formula-at-0"
def phi_formula(r):
    return r ** 2 * np.log(np.abs(r))

with np.errstate(divide="ignore", invalid="ignore"):
    value, slope = tapegrad.jvp(phi_formula, (0.0,), (1.0,))
print(value, slope)


# %% [markdown]
# The fix is to make `φ` a primitive that treats `r == 0` itself, and to give it a forward
# rule, `@tapegrad.frule(fn)`, with the derivative worked out by hand. The rule receives the
# variations of the arguments (a tuple, one per argument) and the arguments' values, and
# returns the value and its variation. With the rule, forward mode never differentiates
# `log` at all: it evaluates the formula for the slope.

# %% name="thin-plate"
@tapegrad.primitive
def thin_plate(r):
    if r == 0:
        return 0.0 * r
    return r ** 2 * np.log(np.abs(r))

@tapegrad.frule(thin_plate)
def thin_plate_frule(dargs, r):
    (dr,) = dargs
    if r == 0:
        return 0.0, 0.0 * dr
    return thin_plate(r), (2 * r * np.log(np.abs(r)) + r) * dr

for r in (0.0, 1.0):
    value, slope = tapegrad.jvp(thin_plate, (r,), (1.0,))
    print(f"r = {r}: value {float(value)}, slope {float(slope)}")


# %% [markdown]
# ## An Euler integrator with a preallocated trajectory
#
# Forward mode pays one pass per input direction; a simulation with a few parameters and
# one loss is the other case, where one reverse pass gives the whole gradient. Here is
# the integrator every course writes, as it is written: a trajectory preallocated with
# `np.zeros` and filled row by row. Inside a traced function the buffer takes traced
# values (see the README's conventions), so the loss is differentiated with respect to
# the parameters `p = (k, c)` of the damped oscillator `x'' = -k x - c x'` *and* its
# initial state `u0 = (x0, v0)`.

# %% name="euler"
def euler(p, u0, n=50, dt=0.05):
    k, c = p
    traj = np.zeros((n, 2))
    traj[0] = u0
    for i in range(n - 1):
        x, v = traj[i]
        traj[i + 1] = traj[i] + dt * np.array([v, -k * x - c * v])
    return traj

def loss(p, u0):
    return np.sum(euler(p, u0)[:, 0] ** 2) * 0.05   # time spent away from 0

p, u0 = np.array([4.0, 0.3]), np.array([1.0, 0.0])
value, (_, dp, du0) = tapegrad.grad(loss, p, u0)
print(f"loss {value:.6f}")
print("d loss / d(k, c) ", np.round(dp, 6))
print("d loss / d(x0, v0)", np.round(du0, 6))

# %% name="euler-check"
h = 1e-6
def central(f, x, i):
    e = np.zeros_like(x); e[i] = h
    return (f(x + e) - f(x - e)) / (2 * h)

print(np.round([central(lambda q: loss(q, u0), p, i) for i in range(2)], 6))
print(np.round([central(lambda w: loss(p, w), u0, i) for i in range(2)], 6))

# %% [markdown]
# At 0 the rule answers with the limits; at 1 the value is `1 · log 1 = 0` and the slope is
# `2 log 1 + 1 = 1`.
#
# Why not rely on the branch alone? Without the rule, forward mode would run the body on
# the dual number, and at 0 the variation of `0.0 * r` is 0: the right slope, but by luck.
# The branch only says what the *value* is at one point; the rule says what the
# *derivative* is. Reverse mode needs a reverse rule, `@tapegrad.rrule(thin_plate)`,
# written the same way (see notebook 2); without one, `grad` traces through the body.
#
# **Exercise.**
# 1. Compute the Jacobian of `lambda v: haaland(*v)` at `args` with
#    `tapegrad.jacobian(..., mode="fwd")` and with `mode="rev"`. How many passes does each
#    make? Which mode would you choose for a function of 1000 inputs and 1 output?
# 2. Check the dual solve against finite differences:
#    `(np.linalg.solve(A + h*dA, b) - np.linalg.solve(A - h*dA, b)) / (2*h)`.
# 3. Write the reverse rule of `thin_plate` and check `tapegrad.grad(thin_plate, r)` at
#    0 and 1.
# 4. Print the tape of one Euler step (`tapegrad.trace(euler, p, u0, n=2)`): which op
#    stands for `traj[1] = ...`? Then take the Jacobian of the final state with respect
#    to `u0` with `tapegrad.jacobian(lambda w: euler(p, w)[-1], u0, mode="rev")`.
