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
# # 2. Build your own reverse mode
#
# Reverse-mode AD runs in two passes. The **forward pass** runs the function and keeps, for
# every primitive, a *pullback*: a small function that turns the derivative of the
# primitive's output into derivatives of its inputs. The **reverse sweep** starts from the
# result and calls the pullbacks in the opposite order, collecting what arrives at each
# value.
#
# This notebook takes tapegrad's reverse mode apart into its pieces and runs them by hand:
# the gradient context, the rules, the seed, and the sweep step with its *set-or-add*.
#
# ## The gradient context
#
# Notebook 1 traced with the default context, which records each primitive as itself.
# `GradContext` (from `tapegrad.gradcontext`) records each primitive *through its reverse rule*:

# %% name="grad-tape"
import numpy as np
import tapegrad
from tapegrad import trace
from tapegrad.gradcontext import GradContext

def f(a, b):
    return a / (a + b * b)

y, tape = trace(f, 2.0, 3.0, ctx=GradContext())
print(tape)

# %% [markdown]
# Each primitive now takes three lines. `rr%4 = rrule(multiply, %3, %3)` calls the rule of
# `multiply`, which returns a pair: the value `b * b` and its pullback. `%4 = getitem(rr%4, 0)`
# reads the value and `pb%4 = getitem(rr%4, 1)` reads the pullback, a function the sweep will
# call later. The value keeps the name the plain trace gave it, `%4`: every view of a tape
# (dumps, `explain`, pictures, generated source, the viewer) counts the *values* `%1, %2, ...`
# and names the plumbing of a primitive after its value (`rr%4`, `pb%4`), with
# `tapegrad.numbering.numbering(tape)`. (A Variable's own repr is its position on the tape,
# which counts the plumbing too: print through the numbering to see the names of the dumps.)
# The context remembers which pullback belongs to which value:

# %% name="pullbacks"
names = tapegrad.numbering.numbering(tape)
print({names[v]: (names[call], names[pb]) for v, (call, pb) in tape.ctx.pullbacks.items()})  # value -> (rrule call, pullback)
print(tapegrad.show.format_tape(tape, compact=True))

# %% [markdown]
# The compact dump folds each group of three into one line:
# `%4, pb%4 = rrule(multiply, %3, %3)` reads "call the rule of `multiply` and name its two
# parts: the value `%4` and its pullback `pb%4`".
#
# ## Rules
#
# A rule takes the primitive's arguments and returns `(value, pullback)`.
# `tapegrad.rrule(fn, *args)` calls the rule registered for `fn`. The pullback returns the
# tangent of the function itself first (`NoTangent()`: `np.sin` has no numbers of its own),
# then one tangent per argument:

# %% name="sin-rule"
y, sin_pullback = tapegrad.rrule(np.sin, 0.5)
dsin, dx = sin_pullback(1.0)
print(y, dsin, dx, np.cos(0.5))


# %% [markdown]
# ## Your own rule, and replacing a rule
#
# A function of yours is traced through like any helper. Mark it with
# `@tapegrad.primitive`, register a rule for it with `@tapegrad.rrule(fn)`, and the
# gradient context records it as one op:

# %% name="square-rule"
@tapegrad.primitive
def square(x):
    return x * x

print(tapegrad.show.format_tape(trace(square, 3.0, ctx=GradContext())[1], compact=True))

@tapegrad.rrule(square)
def square_rrule(x):
    def square_pullback(dy):
        return tapegrad.NO_TANGENT, 2 * x * dy
    return square(x), square_pullback

print(tapegrad.show.format_tape(trace(square, 3.0, ctx=GradContext())[1], compact=True))
print(tapegrad.grad(square, 3.0))


# %% [markdown]
# The registry holds one rule per function, so registering again replaces the rule. Here is
# a rule that says what it is doing, to watch the order in which the two passes run:

# %% name="talking-rule"
@tapegrad.rrule(square)
def talking_square_rrule(x):
    print(f"forward:  square({x})")
    def square_pullback(dy):
        print(f"backward: the pullback of square({x}) receives dy = {dy}")
        return tapegrad.NO_TANGENT, 2 * x * dy
    return square(x), square_pullback

print(tapegrad.extend.find_rrule(square).__name__)
value, grads = tapegrad.grad(lambda x: square(square(x)), 1.5)
print(value, grads[1])

# %% [markdown]
# Both forward calls happen before any pullback runs, and the pullbacks run last-first. The
# outer `square` passes `dy = 2 · 2.25 · 1 = 4.5` to the inner one, which multiplies it by
# `2 · 1.5`: the derivative of x⁴ at 1.5 is 4 · 1.5³ = 13.5.
#
# ## The seed
#
# The sweep needs a derivative to start from: the derivative of the result with respect to
# itself, 1. That number is the **seed**. `tapegrad.sweep.back(tape, seed)` pushes the seed as a
# constant and sweeps back. It returns a dictionary from each value that received a
# derivative to the Variable holding that derivative, and it leaves the backward program on
# the tape:

# %% name="back"
y, tape = trace(f, 2.0, 3.0, ctx=GradContext())
derivs = tapegrad.sweep.back(tape, 1.0)
a, b = tape.inputs[1:]
print("df/da =", derivs[a].op.val, "  df/db =", derivs[b].op.val)
print(tapegrad.show.format_tape(tape, compact=True))

# %% [markdown]
# Read the backward half from the seed down. `pb%6(%7)` calls the pullback of `divide` on
# the seed `%7`; it returns one tangent per argument of `divide`, read as `%8` (for `a`) and
# `%9` (for `a + b*b`), and `_` marks the tangent of `divide` itself, which nobody reads.
# Then the pullback of `add` runs on `%9`, and so on. `accum` appears where a value
# receives a second share of its derivative.
#
# Any other seed scales everything, because every pullback is linear in `dy`:

# %% name="seed-2"
y, tape = trace(f, 2.0, 3.0, ctx=GradContext())
derivs = tapegrad.sweep.back(tape, 2.0)
print("df/da =", derivs[tape.inputs[1]].op.val, "  df/db =", derivs[tape.inputs[2]].op.val)


# %% [markdown]
# For a function whose result is an array, the seed is an array of the same shape and the
# sweep computes a vector-Jacobian product (notebook 4).
#
# ## One step at a time: `step_back`
#
# `back` is a loop over the forward ops from the last to the first. For each value that has
# received a derivative and has a pullback, it calls `tapegrad.sweep.step_back(tape, var, derivs)`:
# push the pullback call, push the reads of its tangents, and store each tangent as a
# derivative of its argument. Run that loop yourself on `x * sin(x)`, where `x` is used
# twice, and watch the dictionary `derivs`:

# %% name="step-back"
def g(x):
    return x * np.sin(x)

y, tape = trace(g, 0.5, ctx=GradContext())
forward_ops = list(tape.ops)
derivs = {tape.result: tape.push(tapegrad.tape.Constant(1.0, note="seed"))}

def named(derivs):
    """derivs with the names the dumps use (tapegrad.numbering)."""
    names = tapegrad.numbering.numbering(tape)
    return "{" + ", ".join(f"{names[v]}: {names[d]}" for v, d in derivs.items()) + "}"

print("start:               ", named(derivs))
for op in reversed(forward_ops):
    if op.var in derivs and op.var in tape.ctx.pullbacks:
        tapegrad.sweep.step_back(tape, op.var, derivs)
        print(f"after step_back({tapegrad.numbering.numbering(tape)[op.var]}):", named(derivs))
print(tapegrad.show.format_tape(tape, compact=True))

# %% [markdown]
# The first step, the pullback of the product `%4`, gives `x` (`%2`) its first derivative,
# `%6 = sin(x)`: its share as the left factor of the product. It also gives `sin(x)` (`%3`)
# its derivative `%7 = x`. The second step, the pullback of `sin`, finds a second share for
# `x`, `%8 = x · cos(x)`. Instead of overwriting `%6` it pushes `%9 = accum(%6, %8)`.
#
# That is **set-or-add**: the first share of a derivative is *set*, every further share is
# *added*. `tapegrad.sweep.set_or_add_deriv(tape, derivs, var, dx)` is that rule as a function.
#
# ## Watching the sweep
#
# `tapegrad.show.viewer(g, 0.5)` plays the same sweep one step at a time. Step with the
# buttons or the arrow keys (click into the page first): each step is one tangent of one
# pullback, with its formula; the forward values the formula reads light up in the forward
# program, and the table of derivatives fills as the sweep runs, green where a share is *set*
# and red where it is *added*: at the last step you see `d%2` receive its second share. On
# the right is the gradient tape as Python, with the same names (`v6` is `%6`).
# `.save("sweep.html")` writes the page to a file that opens in any browser. (On a code host
# that shows notebooks without running their scripts, the page below stays blank: open the
# notebook in Jupyter, or save the page.)

# %% name="viewer"
tapegrad.show.viewer(g, 0.5, title="g(x) = x · sin(x) at x = 0.5: the reverse sweep")

# %% [markdown]
# ## Why add? A sweep that only sets
#
# To see what goes wrong without the add, here is the sweep written out in full: the same
# loop as `back`, with the pullback call and the reads of the tangents spelled out, and the
# storing of each tangent left to a function passed in. (`getitem` is tapegrad's own
# `tangents[i]`; the dumps fold these reads into the pullback's line.)

# %% name="set-only"
from tapegrad.tape import Call, Constant, Variable
from tapegrad.tangents import getitem

def sweep(tape, store):
    forward_ops = list(tape.ops)
    derivs = {tape.result: tape.push(Constant(1.0, note="seed"))}
    for op in reversed(forward_ops):
        var = op.var
        if var not in derivs or var not in tape.ctx.pullbacks:
            continue
        rule_call, pullback = tape.ctx.pullbacks[var]
        # push pullback(dy); the tape runs it at once
        tangents = tape.push(Call(pullback, (derivs[var],), note=("pullback for %s", var)))
        fn, *args = rule_call.op.args
        for i, arg in enumerate(args, start=1):
            if isinstance(arg, Variable):   # constants need no derivative
                dx = tape.push(Call(getitem, (tangents, i), note=("d%s/d%s", var, arg)))
                store(tape, derivs, arg, dx)
    return derivs

def set_only(tape, derivs, var, dx):
    derivs[var] = dx   # a second share overwrites the first

for store in (set_only, tapegrad.sweep.set_or_add_deriv):
    y, tape = trace(g, 0.5, ctx=GradContext())
    derivs = sweep(tape, store)
    print(f"{store.__name__:>16}: dg/dx = {derivs[tape.inputs[1]].op.val}")
print(f"{'by hand':>16}: dg/dx = {np.sin(0.5) + 0.5 * np.cos(0.5)}")

# %% [markdown]
# The set-only sweep answers `0.4388 = x · cos(x)`: the share through `sin` arrived second
# and overwrote the share `sin(x)` from the product. With `set_or_add_deriv` the sweep
# agrees with the derivative worked by hand, sin(x) + x cos(x). The chain rule sums over
# all the paths from an input to the result, and every value used more than once (here `x`;
# in `a/(a + b*b)` both `a` and `b`) is where paths meet.
#
# **Exercise.**
# 1. Run both sweeps on `f = a/(a + b*b)` at (2, 3). Which share does the set-only sweep
#    lose for `a`, and which for `b`? Compare with the `accum` lines of the compact tape
#    printed in the section on the seed.
# 2. Change `set_only` so that it raises an error instead of overwriting. Which of the
#    functions in this notebook would never make it fire?
# 3. Register a rule for `square` with a mistake in it (say `x * dy` instead of
#    `2 * x * dy`). Does `tapegrad.grad(square, 3.0)` notice? Does
#    `tapegrad.check_grad(square, 3.0)`?
