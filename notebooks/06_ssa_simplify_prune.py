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
# # 6. SSA, simplification and dead code
#
# Tracing works on any function that computes with numpy, and `grad` is such a function.
# Tracing `grad(f, ...)` therefore records the *gradient computation itself* as a tape: a
# straight-line program in SSA form that a compiler can clean up. Take `f = m x + b`:

# %% name="traced-grad"
import numpy as np
import tapegrad

def f(m, x, b):
    return m * x + b

value, tape = tapegrad.trace(lambda m, x, b: tapegrad.grad(f, m, x, b), 2.0, 3.0, 1.0)
print(tape)

# %% [markdown]
# The outer trace sees only what the rules compute with numbers: the forward pass `m * x`
# and `+ b`, then the pullback of `multiply` on the seed 1.0, `1.0 * x` and `1.0 * m`. The
# pullback of `add` passes the seed on unchanged, so no op computes `df/db`: it is the
# constant `1.0`. The last op, `build`, puts the results back into the structure `grad`
# returns; in the Python source below it becomes a plain `return` of a tuple.
#
# `tapegrad.explain` shows the same sweep as you would write it by hand, with adjoints:

# %% name="explain"
tapegrad.explain(f, 2.0, 3.0, 1.0)

# %% [markdown]
# ## The tape as Python source
#
# `tapegrad.program.to_source` writes a tape as a Python function, one line per op:

# %% name="source"
print(tapegrad.program.to_source(tape, "grad_f"))

# %% [markdown]
# `simplify` applies algebraic rewrites such as `1.0 * x → x` and `x + 0 → x`. If we only
# want the gradient, the value `m * x + b` becomes **dead code**: nothing returned depends
# on it. `prune` removes such ops:

# %% name="simplify-prune"
_, gradient_tape = tapegrad.trace(lambda m, x, b: tapegrad.grad(f, m, x, b)[1], 2.0, 3.0, 1.0)
before = tapegrad.program.to_source(gradient_tape, "df")
after = tapegrad.program.to_source(tapegrad.program.prune(tapegrad.program.simplify(gradient_tape)), "df")
print(before)
print(after)
print(len(before.splitlines()), "lines ->", len(after.splitlines()), "lines")

# %% [markdown]
# What is left is the whole derivative of `m x + b`: `(x, m, 1)`. The passes return new
# tapes with the same values, so they can be checked by running them:

# %% name="compiled-tape"
program = tapegrad.program.compile_tape(tapegrad.program.prune(tapegrad.program.simplify(gradient_tape)))
print(program(None, 2.0, 3.0, 1.0), program(None, 5.0, -1.0, 0.0))


# %% [markdown]
# ## Common subexpressions
#
# In `g(x) = x sin(x) + sin(x)` the forward pass computes `sin(x)` twice, and the pullbacks
# of the two `sin` calls both compute `cos(x)`. `cse` (common subexpression elimination)
# computes each repeated pure call once; `tapegrad.program.optimize` applies `simplify`, `cse` and
# `prune` in turn:

# %% name="cse"
def g(x):
    return x * np.sin(x) + np.sin(x)

_, tape_g = tapegrad.trace(lambda x: tapegrad.grad(g, x)[1], 0.5)
print(tapegrad.program.to_source(tape_g, "dg"))
print(tapegrad.program.to_source(tapegrad.program.cse(tape_g), "dg"))
print(tapegrad.program.to_source(tapegrad.program.optimize(tape_g), "dg"))

# %% [markdown]
# From twelve operations to five: `sin`, `cos`, and the three that combine them into the
# derivative `cos(x) + sin(x) + x cos(x)`. The value `x sin(x) + sin(x)` itself is gone: the
# lambda returns only the gradient, so `prune` removed it.
#
# ## Compiled gradients
#
# `tapegrad.compiled_grad(f)` does all of this once per kind of input: trace the gradient
# program, optimize it, compile its source to Python, and run the compiled function on later
# calls instead of tracing again.

# %% name="compiled-grad"
grad_f = tapegrad.compiled_grad(f)
print(grad_f(2.0, 3.0, 1.0))
print(grad_f(5.0, -1.0, 0.0))
print(grad_f.source(2.0, 3.0, 1.0))

# %% [markdown]
# ## Pictures
#
# `tapegrad.show.to_dot` writes a tape as Graphviz DOT text, and `tapegrad.draw` shows it in a
# notebook as a picture, with each value and its type: Graphviz draws it where it is
# installed, tapegrad itself (as SVG) everywhere else; `.save("tape.svg")` writes it to a
# file. Forward ops are blue boxes, backward ops dashed orange boxes and accumulations red
# diamonds.

# %% name="draw"
y, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
back(1.0)
dot = tapegrad.show.to_dot(back.tape)
print(len(dot.splitlines()), "lines of DOT; the accumulation of a:")
print(next(line for line in dot.splitlines() if "accumulate d%2" in line))
tapegrad.draw(back.tape)

# %% [markdown]
# **Exercise.**
# 1. Trace the gradient of `lambda x: np.sum(x * x)` at an array and print its source before
#    and after `tapegrad.program.optimize`. Which lines remain? What is the constant the source
#    calls `c_ndarray` (hint: what does the pullback of `np.sum` do with its `dy`)?
# 2. `simplify` leaves `0 * x` alone unless called with `assume_finite=True`. Find an `x`
#    for which `0 * x` is not 0.
# 3. Trace the gradient of `power(x, n)` from notebook 3 with `n = 3`, optimize it, and read
#    the guard that remains. Why must `prune` keep guards even though nothing uses their
#    values?
