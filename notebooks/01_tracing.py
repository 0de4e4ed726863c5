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
# # 1. Tracing: Wengert lists and tapes
#
# To differentiate a program we first have to *see* it: not its Python source, but the
# list of elementary operations it actually performed on numbers. A list in which every
# line computes one new value from earlier ones is called a **Wengert list**; tapegrad
# calls it a **tape**.
#
# `tapegrad.trace(f, *args)` runs `f` on stand-ins for its arguments, called *Tracers*, and
# writes every numpy operation they take part in onto a tape.

# %% name="trace-f"
import numpy as np
import tapegrad

def f(a, b):
    return a / (a + b * b)

value, tape = tapegrad.trace(f, 2.0, 3.0)
print(value)
print(tape)

# %% [markdown]
# ## Reading a tape
#
# * The `inp` lines are the **inputs**. `%1` is the function itself (a function can carry
#   numbers of its own, in a closure or in an object, and those can be differentiated too:
#   see notebook 3); `%2` and `%3` are `a` and `b`, named in the comment.
# * Every other line is one **call** of a primitive: `%4 = multiply(%3, %3)` is `b * b`.
#   Python's operators have become the numpy functions of the same meaning, and each line
#   ends with the type of its value (`::float64`).
#
# Every `%k` is assigned exactly once and only used after that, so a tape is a program in
# *static single assignment* (SSA) form. Its ops are ordinary Python objects:

# %% name="ops"
print(tape.inputs)   # the Variables of the inp ops
op = tape[6]         # the op printed as %6
print(type(op).__name__, op.fn.__name__, op.args, op.val)
print(tape.summary())


# %% [markdown]
# ## Your own functions are traced through
#
# Only primitives reach the tape. Here `g` and `h` are helpers: the tape shows the numpy
# calls inside them and nothing of the helpers themselves.

# %% name="nested"
def g(a, b):
    return a * b

def h(a):
    return np.sin(a)

def f2(x1, x2):
    return g(x1, x2) + h(x1)

print(tapegrad.trace(f2, 2.0, 3.0)[1])

# %% [markdown]
# This is what makes tracing practical: any Python code built from numpy calls can be
# traced, however it is organised into functions, classes and loops, and the tape never
# needs to know about them.
#
# ## The tape is a program
#
# Every op keeps the value it computed during the trace, and the tape can also run again on
# new inputs: `replay` takes one value per `inp` line (the function first).

# %% name="replay"
print(tape.replay(f, 1.0, 2.0), f(1.0, 2.0))


# %% [markdown]
# ## Keeping a function whole: contexts
#
# Who decides what counts as a primitive? The **context** of the trace. Every call a Tracer
# sees goes to the context, which asks its method `is_primitive(fn, *args)`: if the answer
# is yes, the call becomes one op; if no, the function's body runs on the Tracers and the
# calls inside it are recorded instead. The default context, `tapegrad.context.BaseContext`, says
# yes to every numpy function. Your own functions are not even asked about: they simply
# run, and the numpy calls inside them are what the Tracers see.
#
# To keep a function of your own whole, mark it with `@tapegrad.primitive` (so that the
# context is asked about it at all) and trace with a context that says yes to it:

# %% name="context"
@tapegrad.primitive
def softplus(x):
    return np.log(1 + np.exp(x))

class KeepSoftplus(tapegrad.context.BaseContext):
    def is_primitive(self, fn, *args):
        return fn is softplus or super().is_primitive(fn, *args)

print(tapegrad.trace(lambda x: 2 * softplus(x), 0.5)[1])
print(tapegrad.trace(lambda x: 2 * softplus(x), 0.5, ctx=KeepSoftplus())[1])

# %% [markdown]
# The first tape shows the three numpy calls inside `softplus` (`exp`, `add`, `log`); the
# second one holds a single `softplus` op. Keeping a function whole is what you want when
# you know something better about it than its body says, typically its derivative. The
# gradient context of notebook 2 makes the same decision by its own rule: a marked function
# stays whole exactly when a derivative rule is registered for it.
#
# **Exercise.**
# 1. Trace `lambda x: np.exp(-x * x) * np.cos(3 * x)` at 0.4. How many primitives does
#    the tape hold? What became of the minus sign, and where does the constant `3` appear?
# 2. Write a context whose `is_primitive` says yes only to `np.cos`, and trace the same
#    function with it. Read the error message: why can a context decline to keep
#    `softplus` whole, but not `np.exp`? (What would it trace through?)
# 3. Replay your tape from question 1 at `x = 0.0` and check the result by hand.
