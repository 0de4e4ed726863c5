"""Write the notebooks in notebooks/ from the cell lists below (run after editing them).

    python tools/make_notebooks.py

Notebooks are generated so that their source stays reviewable as Python. They are written
without outputs and with fixed cell ids, so that running this script twice gives the same
files. A cell that the tests read has a name (its id), given as ``code(..., name="...")``;
tests/test_notebooks.py executes every notebook and compares the printed output of those
cells.
"""
import pathlib
import textwrap

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parent.parent / "notebooks"


def md(text):
    cell = new_markdown_cell(textwrap.dedent(text).strip("\n"))
    cell["id"] = ""  # numbered in build()
    return cell


def code(text, name=None):
    cell = new_code_cell(textwrap.dedent(text).strip("\n"))
    cell["id"] = name or ""  # a name, or numbered in build()
    return cell


# --- 1. Tracing ----------------------------------------------------------------------------

TRACING = [
    md("""
    # 1. Tracing: Wengert lists and tapes

    To differentiate a program we first have to *see* it: not its Python source, but the
    list of elementary operations it actually performed on numbers. A list in which every
    line computes one new value from earlier ones is called a **Wengert list**; tapegrad
    calls it a **tape**.

    `tapegrad.trace(f, *args)` runs `f` on stand-ins for its arguments, called *Tracers*, and
    writes every numpy operation they take part in onto a tape.
    """),
    code("""
    import numpy as np
    import tapegrad

    def f(a, b):
        return a / (a + b * b)

    value, tape = tapegrad.trace(f, 2.0, 3.0)
    print(value)
    print(tape)
    """, name="trace-f"),
    md("""
    ## Reading a tape

    * The `inp` lines are the **inputs**. `%1` is the function itself (a function can carry
      numbers of its own, in a closure or in an object, and those can be differentiated too:
      see notebook 3); `%2` and `%3` are `a` and `b`, named in the comment.
    * Every other line is one **call** of a primitive: `%4 = multiply(%3, %3)` is `b * b`.
      Python's operators have become the numpy functions of the same meaning, and each line
      ends with the type of its value (`::float64`).

    Every `%k` is assigned exactly once and only used after that, so a tape is a program in
    *static single assignment* (SSA) form. Its ops are ordinary Python objects:
    """),
    code("""
    print(tape.inputs)   # the Variables of the inp ops
    op = tape[6]         # the op printed as %6
    print(type(op).__name__, op.fn.__name__, op.args, op.val)
    print(tape.summary())
    """, name="ops"),
    md("""
    ## Your own functions are traced through

    Only primitives reach the tape. Here `g` and `h` are helpers: the tape shows the numpy
    calls inside them and nothing of the helpers themselves.
    """),
    code("""
    def g(a, b):
        return a * b

    def h(a):
        return np.sin(a)

    def f2(x1, x2):
        return g(x1, x2) + h(x1)

    print(tapegrad.trace(f2, 2.0, 3.0)[1])
    """, name="nested"),
    md("""
    This is what makes tracing practical: any Python code built from numpy calls can be
    traced, however it is organised into functions, classes and loops, and the tape never
    needs to know about them.

    ## The tape is a program

    Every op keeps the value it computed during the trace, and the tape can also run again on
    new inputs: `replay` takes one value per `inp` line (the function first).
    """),
    code("""
    print(tape.replay(f, 1.0, 2.0), f(1.0, 2.0))
    """, name="replay"),
    md("""
    ## Keeping a function whole: contexts

    Who decides what counts as a primitive? The **context** of the trace. Every call a Tracer
    sees goes to the context, which asks its method `is_primitive(fn, *args)`: if the answer
    is yes, the call becomes one op; if no, the function's body runs on the Tracers and the
    calls inside it are recorded instead. The default context, `tapegrad.BaseContext`, says
    yes to every numpy function. Your own functions are not even asked about: they simply
    run, and the numpy calls inside them are what the Tracers see.

    To keep a function of your own whole, mark it with `@tapegrad.primitive` (so that the
    context is asked about it at all) and trace with a context that says yes to it:
    """),
    code("""
    @tapegrad.primitive
    def softplus(x):
        return np.log(1 + np.exp(x))

    class KeepSoftplus(tapegrad.BaseContext):
        def is_primitive(self, fn, *args):
            return fn is softplus or super().is_primitive(fn, *args)

    print(tapegrad.trace(lambda x: 2 * softplus(x), 0.5)[1])
    print(tapegrad.trace(lambda x: 2 * softplus(x), 0.5, ctx=KeepSoftplus())[1])
    """, name="context"),
    md("""
    The first tape shows the three numpy calls inside `softplus` (`exp`, `add`, `log`); the
    second one holds a single `softplus` op. Keeping a function whole is what you want when
    you know something better about it than its body says, typically its derivative. The
    gradient context of notebook 2 makes the same decision by its own rule: a marked function
    stays whole exactly when a derivative rule is registered for it.

    **Exercise.**
    1. Trace `lambda x: np.exp(-x * x) * np.cos(3 * x)` at 0.4. How many primitives does
       the tape hold? What became of the minus sign, and where does the constant `3` appear?
    2. Write a context whose `is_primitive` says yes only to `np.cos`, and trace the same
       function with it. Read the error message: why can a context decline to keep
       `softplus` whole, but not `np.exp`? (What would it trace through?)
    3. Replay your tape from question 1 at `x = 0.0` and check the result by hand.
    """),
]


# --- 2. Build your own AD ------------------------------------------------------------------

BUILD_YOUR_OWN_AD = [
    md("""
    # 2. Build your own reverse mode

    Reverse-mode AD runs in two passes. The **forward pass** runs the function and keeps, for
    every primitive, a *pullback*: a small function that turns the derivative of the
    primitive's output into derivatives of its inputs. The **reverse sweep** starts from the
    result and calls the pullbacks in the opposite order, collecting what arrives at each
    value.

    This notebook takes tapegrad's reverse mode apart into its pieces and runs them by hand:
    the gradient context, the rules, the seed, and the sweep step with its *set-or-add*.

    ## The gradient context

    Notebook 1 traced with the default context, which records each primitive as itself.
    `tapegrad.GradContext` records each primitive *through its reverse rule*:
    """),
    code("""
    import numpy as np
    import tapegrad
    from tapegrad import GradContext, trace

    def f(a, b):
        return a / (a + b * b)

    y, tape = trace(f, 2.0, 3.0, ctx=GradContext())
    print(tape)
    """, name="grad-tape"),
    md("""
    Each primitive now takes three lines. `%4 = rrule(multiply, %3, %3)` calls the rule of
    `multiply`, which returns a pair: the value `b * b` and its pullback. `%5 = getitem(%4, 0)`
    reads the value (the next op uses `%5` where the plain trace used `%4`) and
    `%6 = getitem(%4, 1)` reads the pullback, a function the sweep will call later. The context
    remembers which pullback belongs to which value:
    """),
    code("""
    print(tape.ctx.pullbacks)   # value -> (rrule call, pullback)
    print(tapegrad.format_tape(tape, compact=True))
    """, name="pullbacks"),
    md("""
    The compact dump folds each group of three into one line:
    `%5, %6 = [%4] = rrule(multiply, %3, %3)` reads "call the rule, name the pair `%4` and its
    two parts `%5` and `%6`".

    ## Rules

    A rule takes the primitive's arguments and returns `(value, pullback)`.
    `tapegrad.rrule(fn, *args)` calls the rule registered for `fn`. The pullback returns the
    tangent of the function itself first (`NoTangent()`: `np.sin` has no numbers of its own),
    then one tangent per argument:
    """),
    code("""
    y, sin_pullback = tapegrad.rrule(np.sin, 0.5)
    dsin, dx = sin_pullback(1.0)
    print(y, dsin, dx, np.cos(0.5))
    """, name="sin-rule"),
    md("""
    ## Your own rule, and replacing a rule

    A function of yours is traced through like any helper. Mark it with
    `@tapegrad.primitive`, register a rule for it with `@tapegrad.rrule(fn)`, and the
    gradient context records it as one op:
    """),
    code("""
    @tapegrad.primitive
    def square(x):
        return x * x

    print(tapegrad.format_tape(trace(square, 3.0, ctx=GradContext())[1], compact=True))

    @tapegrad.rrule(square)
    def square_rrule(x):
        def square_pullback(dy):
            return tapegrad.NO_TANGENT, 2 * x * dy
        return square(x), square_pullback

    print(tapegrad.format_tape(trace(square, 3.0, ctx=GradContext())[1], compact=True))
    print(tapegrad.grad(square, 3.0))
    """, name="square-rule"),
    md("""
    The registry holds one rule per function, so registering again replaces the rule. Here is
    a rule that says what it is doing, to watch the order in which the two passes run:
    """),
    code("""
    @tapegrad.rrule(square)
    def talking_square_rrule(x):
        print(f"forward:  square({x})")
        def square_pullback(dy):
            print(f"backward: the pullback of square({x}) receives dy = {dy}")
            return tapegrad.NO_TANGENT, 2 * x * dy
        return square(x), square_pullback

    print(tapegrad.find_rrule(square).__name__)
    value, grads = tapegrad.grad(lambda x: square(square(x)), 1.5)
    print(value, grads[1])
    """, name="talking-rule"),
    md("""
    Both forward calls happen before any pullback runs, and the pullbacks run last-first. The
    outer `square` passes `dy = 2 · 2.25 · 1 = 4.5` to the inner one, which multiplies it by
    `2 · 1.5`: the derivative of x⁴ at 1.5 is 4 · 1.5³ = 13.5.

    ## The seed

    The sweep needs a derivative to start from: the derivative of the result with respect to
    itself, 1. That number is the **seed**. `tapegrad.back(tape, seed)` pushes the seed as a
    constant and sweeps back. It returns a dictionary from each value that received a
    derivative to the Variable holding that derivative, and it leaves the backward program on
    the tape:
    """),
    code("""
    y, tape = trace(f, 2.0, 3.0, ctx=GradContext())
    derivs = tapegrad.back(tape, 1.0)
    a, b = tape.inputs[1:]
    print("df/da =", derivs[a].op.val, "  df/db =", derivs[b].op.val)
    print(tapegrad.format_tape(tape, compact=True))
    """, name="back"),
    md("""
    Read the backward half from the seed down. `%12(%13)` calls the pullback of `divide` on
    the seed; it returns one tangent per argument of `divide`, read as `%15` (for `a`) and
    `%16` (for `a + b*b`), and `_` marks the tangent of `divide` itself, which nobody reads.
    Then the pullback of `add` runs on `%16`, and so on. `accum` appears where a value
    receives a second share of its derivative.

    Any other seed scales everything, because every pullback is linear in `dy`:
    """),
    code("""
    y, tape = trace(f, 2.0, 3.0, ctx=GradContext())
    derivs = tapegrad.back(tape, 2.0)
    print("df/da =", derivs[tape.inputs[1]].op.val, "  df/db =", derivs[tape.inputs[2]].op.val)
    """, name="seed-2"),
    md("""
    For a function whose result is an array, the seed is an array of the same shape and the
    sweep computes a vector-Jacobian product (notebook 4).

    ## One step at a time: `step_back`

    `back` is a loop over the forward ops from the last to the first. For each value that has
    received a derivative and has a pullback, it calls `tapegrad.step_back(tape, var, derivs)`:
    push the pullback call, push the reads of its tangents, and store each tangent as a
    derivative of its argument. Run that loop yourself on `x * sin(x)`, where `x` is used
    twice, and watch the dictionary `derivs`:
    """),
    code("""
    def g(x):
        return x * np.sin(x)

    y, tape = trace(g, 0.5, ctx=GradContext())
    forward_ops = list(tape.ops)
    derivs = {tape.result: tape.push(tapegrad.Constant(1.0, note="seed"))}
    print("start:               ", derivs)
    for op in reversed(forward_ops):
        if op.var in derivs and op.var in tape.ctx.pullbacks:
            tapegrad.step_back(tape, op.var, derivs)
            print(f"after step_back({op.var}):", derivs)
    print(tapegrad.format_tape(tape, compact=True))
    """, name="step-back"),
    md("""
    The first step, the pullback of the product `%7`, gives `x` (`%2`) its first derivative,
    `%11 = sin(x)`: its share as the left factor of the product. It also gives `sin(x)` (`%4`)
    its derivative `%12 = x`. The second step, the pullback of `sin`, finds a second share for
    `x`, `%14 = x · cos(x)`. Instead of overwriting `%11` it pushes `%15 = accum(%11, %14)`.

    That is **set-or-add**: the first share of a derivative is *set*, every further share is
    *added*. `tapegrad.set_or_add_deriv(tape, derivs, var, dx)` is that rule as a function.

    ## Why add? A sweep that only sets

    To see what goes wrong without the add, here is the sweep written out in full: the same
    loop as `back`, with the pullback call and the reads of the tangents spelled out, and the
    storing of each tangent left to a function passed in. (`getitem` is tapegrad's own
    `tangents[i]`; the dumps fold these reads into the pullback's line.)
    """),
    code("""
    from tapegrad import Call, Constant, Variable
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

    for store in (set_only, tapegrad.set_or_add_deriv):
        y, tape = trace(g, 0.5, ctx=GradContext())
        derivs = sweep(tape, store)
        print(f"{store.__name__:>16}: dg/dx = {derivs[tape.inputs[1]].op.val}")
    print(f"{'by hand':>16}: dg/dx = {np.sin(0.5) + 0.5 * np.cos(0.5)}")
    """, name="set-only"),
    md("""
    The set-only sweep answers `0.4388 = x · cos(x)`: the share through `sin` arrived second
    and overwrote the share `sin(x)` from the product. With `set_or_add_deriv` the sweep
    agrees with the derivative worked by hand, sin(x) + x cos(x). The chain rule sums over
    all the paths from an input to the result, and every value used more than once (here `x`;
    in `a/(a + b*b)` both `a` and `b`) is where paths meet.

    **Exercise.**
    1. Run both sweeps on `f = a/(a + b*b)` at (2, 3). Which share does the set-only sweep
       lose for `a`, and which for `b`? Compare with the `accum` lines of the compact tape
       printed in the section on the seed.
    2. Change `set_only` so that it raises an error instead of overwriting. Which of the
       functions in this notebook would never make it fire?
    3. Register a rule for `square` with a mistake in it (say `x * dy` instead of
       `2 * x * dy`). Does `tapegrad.grad(square, 3.0)` notice? Does
       `tapegrad.check_grad(square, 3.0)`?
    """),
]


# --- 3. Pullbacks and closures -------------------------------------------------------------

PULLBACKS_AND_CLOSURES = [
    md("""
    # 3. Pullbacks, loops, closures, and a wrong rule

    ## A pullback is a Jacobian, transposed and applied

    For a primitive `y = f(x)` with Jacobian `J` (`J[i, j] = ∂y_i/∂x_j`), the pullback maps
    the derivative of the result with respect to `y`, a vector `ȳ`, to the derivative with
    respect to `x`: `x̄ = Jᵀ ȳ`. Call the rule of `np.sin` on a vector and pull back the unit
    vectors: `Jᵀ e_i` is row `i` of `J`, so the rows pulled back make up the Jacobian.
    """),
    code("""
    import numpy as np
    import tapegrad

    x = np.array([0.1, 0.2, 0.3])
    y, sin_pullback = tapegrad.rrule(np.sin, x)
    J = np.stack([sin_pullback(e)[1] for e in np.eye(3)])
    print(J)
    print(np.allclose(J, np.diag(np.cos(x))))
    """, name="sin-jacobian"),
    md("""
    `sin` acts elementwise, so its Jacobian is diagonal, and the pullback never builds it: it
    computes `ȳ * cos(x)`, three multiplications instead of nine entries. A pullback is a
    recipe for `Jᵀ ȳ`, not a matrix. The pullback of `cos` is `ȳ · (−sin x)`, and like every
    pullback it is linear in `ȳ`:
    """),
    code("""
    _, cos_pullback = tapegrad.rrule(np.cos, 0.5)
    print(cos_pullback(1.0)[1], -np.sin(0.5))
    print(cos_pullback(2.0)[1])
    """, name="cos"),
    md("""
    A primitive of two arguments has one tangent per argument. For numbers `a * b` the
    Jacobian is the row `[b, a]`, so the pullback returns `(ȳ · b, ȳ · a)`; for arrays,
    elementwise, `(ȳ * b, ȳ * a)`. A rule may hand a tangent back as a `Thunk`, a tangent
    computed only when the sweep reads it: often one factor is a constant, and its tangent
    is never needed. tapegrad's rule for `multiply` does this for arrays (for two plain
    floats, computing at once is cheaper):
    """),
    code("""
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    _, mul_pullback = tapegrad.rrule(np.multiply, a, b)
    tangents = mul_pullback(np.ones(2))
    print(tangents)
    print(*[t.fn() if isinstance(t, tapegrad.Thunk) else t for t in tangents])
    """, name="multiply"),
    md("""
    ## A loop, and its adjoint running backwards

    `power` multiplies `n` times. The tape holds one multiplication per turn of the loop,
    and the gradient tape calls their pullbacks in reverse order:
    """),
    code("""
    def power(x, n):
        r = 1.0
        for _ in range(n):
            r *= x
        return r

    print(tapegrad.grad(power, 2.0, 3))
    y, back = tapegrad.pullback(power, 2.0, 3)
    back()
    print(tapegrad.format_tape(back.tape, compact=True))
    """, name="power"),
    md("""
    Read the backward half: the pullbacks `%13`, `%10`, `%7` of the three multiplications run
    last-first, and each hands a share of the derivative to `x` (`%2`), so `x` gets two
    `accum`s: `dx = 4 + 4 + 4 = 12 = 3x²`. The first multiplication is `1.0 * x`; its
    pullback's first tangent, for the constant `1.0`, is never read (`_`).

    The count `n` gets `NoTangent()`: an integer used as a loop count has no derivative. The
    tape also records the loop count it saw, as the **guard** `guard index(%3) == 3`: a tape
    is only valid for inputs that take the same path (the comment says where in the code the
    guard came from). Replaying checks the guards:
    """),
    code("""
    _, tape = tapegrad.trace(power, 2.0, 3)
    print(tape.replay(power, 5.0, 3))
    try:
        tape.replay(power, 5.0, 4)
    except tapegrad.GuardError as e:
        print("GuardError:", e)
    """, name="guard"),
    md("""
    ## Closures have gradients with fields

    A function can carry numbers of its own. `make_scale(3.0)` returns a function that
    remembers `a = 3.0`; its gradient with respect to itself (the first entry of `grad`'s
    tuple, `ZeroTangent()` so far) is now a `Tangent` with one field per captured variable:
    """),
    code("""
    make_scale = lambda a: (lambda x: x * a)
    f = make_scale(3.0)
    value, (df, dx) = tapegrad.grad(f, 2.0)
    print(value, df, dx)
    print(df.a, df.fields)
    print(tapegrad.trace(f, 2.0)[1])
    """, name="closure"),
    md("""
    The captured `a` is an input of the tape like `x`, named `f.a`. This is how a model
    written as a closure (or as an object, notebook 4) gets gradients for its parameters.

    ## Debugging a wrong pullback

    A rule is code, and code has bugs. Here is `logistic`, a primitive with a rule that forgets
    a factor: the derivative of `s = 1/(1 + e^(-z))` is `s(1 − s)`, not `s`. Nothing fails:
    `grad` returns numbers, they are just wrong.
    """),
    code("""
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
    """),
    md("""
    `tapegrad.check_grad` compares the gradient with central differences along a random
    direction and raises `AssertionError` when they disagree:
    """),
    code("""
    def check(name, fn, *args):
        try:
            tapegrad.check_grad(fn, *args)
            print(f"{name:<14} ok")
        except AssertionError as e:
            print(f"{name:<14} FAILS: {e}")

    check("loss", loss, w, x)
    """, name="check-loss"),
    md("""
    Something is wrong, but where? Narrow it down: the gradient tape lists every primitive
    call together with the values it was called with, so each call can be checked on its own
    with exactly those values.
    """),
    code("""
    _, tape = tapegrad.trace(loss, w, x, ctx=tapegrad.GradContext())
    for op in tape:
        if isinstance(op, tapegrad.Call) and op.fn is tapegrad.rrule:
            fn, *args = op.args
            values = [a.op.val if isinstance(a, tapegrad.Variable) else a for a in args]
            check(f"{op.var} {fn.__name__}", lambda *v: fn(*v), *values)
    """, name="narrow"),
    md("""
    Only `logistic` fails. Fix its rule (registering again replaces it) and check again:
    """),
    code("""
    @tapegrad.rrule(logistic)
    def logistic_rrule(z):
        s = logistic(z)
        def logistic_pullback(dy):
            return tapegrad.NO_TANGENT, dy * s * (1 - s)
        return s, logistic_pullback

    check("logistic", logistic, np.tanh(w * x))
    check("loss", loss, w, x)
    print(tapegrad.grad(loss, w, x)[1][1], tapegrad.ngradient(loss, w, x)[0])
    """, name="fixed"),
    md("""
    **Exercise.**
    1. Compute the Jacobian of `lambda v: v * v[::-1]` at `[1.0, 2.0, 3.0]` from its
       pullback, one unit vector at a time (use `tapegrad.pullback` and `back(e)`). Is it
       symmetric? Check one entry by hand.
    2. Change `power` to `r = x; for _ in range(n - 1): r *= x`. Which line of the gradient
       tape disappears, and why does `x` still get two `accum`s at `n = 3`?
    3. Give `logistic` a rule whose pullback returns a tangent of the wrong *shape*
       (`np.sum(dy * s * (1 - s))`) and read the error message: does it name the rule?
    """),
]


# --- 4. Pullback and accumulation ----------------------------------------------------------

PULLBACK_AND_ACCUMULATION = [
    md("""
    # 4. Pullbacks, accumulation, structures and a training loop

    ## `pullback` and `back`

    `tapegrad.pullback(f, *args)` runs the forward pass once and returns the value and
    `back`, the reverse sweep ready to run. `back(dy)` runs it from the seed `dy` and returns
    the tangent of `f` itself followed by one tangent per argument. It can be called again
    with another seed without recording the forward pass again:
    """),
    code("""
    import numpy as np
    import tapegrad

    def f(a, b):
        return a / (a + b * b)

    y, back = tapegrad.pullback(f, 2.0, 3.0)
    print(y)
    print(back(1.0))
    print(back(2.0))
    """, name="pullback"),
    md("""
    `grad(f, *args)` is exactly `pullback` followed by `back()` with the seed 1.

    ## Nothing arrives: `None` and `ZeroTangent()`

    During the sweep, a value that no pullback has reached has no entry in the dictionary of
    derivatives (`None`: no share yet). The first share is set, later ones are added. When the
    sweep ends, an input that is still missing gets `ZeroTangent()`: no path from it reaches
    the result. Here `y` is never used:
    """),
    code("""
    _, back = tapegrad.pullback(lambda x, y: x * x, 2.0, 5.0)
    print(back(1.0))
    for v in back.tape.inputs[1:]:   # the inputs x and y, and what the sweep left for them
        d = back.derivatives.get(v)
        print(v, back.tape[v].note, d if d is None else d.op.val)
    """, name="zero"),
    md("""
    `ZeroTangent()` is the zero of tangents: `tapegrad.accum`, the "add" of set-or-add, treats
    it as nothing, and so do `+` and `*`. The sweep never has to build an array of zeros for a
    value that no path reaches. When you do need zeros (to update parameters, say),
    `tapegrad.fill_zeros` makes them in the shape of the argument:
    """),
    code("""
    Z = tapegrad.ZeroTangent()
    print(tapegrad.accum(Z, 2.5), tapegrad.accum(2.5, Z), Z + 2.5, 3 * Z)
    print(tapegrad.accum((1.0, Z), (Z, 2.0)))
    params = {"w": 2.0, "unused": np.ones(2)}
    _, (_, dparams) = tapegrad.grad(lambda p: p["w"] ** 2, params)
    print(dparams)
    print(tapegrad.fill_zeros(dparams, params))
    """, name="accum"),
    md("""
    ## Tuples and dicts

    A function may return a tuple or a dict. Its seed then has the same structure: one seed per
    entry, saying how much of each entry goes into the derivative. `(1, 0)` picks the first
    entry; `(1, 1)` differentiates their sum.
    """),
    code("""
    y, back = tapegrad.pullback(lambda x: (x * x, np.sin(x)), 1.0)
    print(back((1.0, 0.0))[1], back((0.0, 1.0))[1], back((1.0, 1.0))[1])

    y, back = tapegrad.pullback(lambda x: {"square": x * x, "cube": x ** 3}, 2.0)
    print(back({"square": 1.0, "cube": 0.5})[1])
    """, name="structured-results"),
    md("""
    Without a seed the error says what to pass:
    """),
    code("""
    try:
        tapegrad.grad(lambda x: {"square": x * x, "cube": x ** 3}, 2.0)
    except tapegrad.SeedError as e:
        print("SeedError:", e)
    """, name="seed-error"),
    md("""
    Arguments can be structured too. The gradient of a dict of parameters is a dict with the
    same keys; each number and float array inside is an input of the tape, named by its path:
    """),
    code("""
    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    x = np.array([3.0, 4.0])
    value, (_, dparams, dx) = tapegrad.grad(lambda p, x: np.sum(p["w"] * x) + p["b"], params, x)
    print(value, dparams, dx)
    print(tapegrad.trace(lambda p, x: np.sum(p["w"] * x) + p["b"], params, x)[1])
    """, name="dict-params"),
    md("""
    ## A polynomial model

    A model is often an object holding its parameters. `Polynomial` evaluates
    `w0 + w1 x + w2 x² + w3 x³` by Horner's rule, `w0 + x (w1 + x (w2 + x w3))`. Its gradient
    is a `Tangent[Polynomial]` with one field per attribute:
    """),
    code("""
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
    """, name="polynomial"),
    md("""
    ## Training

    Fit the weights to samples of a cubic by gradient descent. `tapegrad.update(model, g,
    lr=...)` returns a new model with each parameter moved to `p - lr * g`; the old model is
    not changed.
    """),
    code("""
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
    """, name="training"),
    md("""
    The weights approach `[1, -2, 0.5, 1]`. The plot of the loss uses matplotlib if it is
    installed (drawn in memory with the Agg backend, then shown as an image); without it the
    losses are printed.
    """),
    code("""
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
    """, name="plot"),
    md("""
    **Exercise.**
    1. Call `back` from `tapegrad.pullback(lambda x: np.sin(x), np.linspace(0, 1, 4))` with
       each unit vector as the seed. What do you get, and why does `back()` without a seed
       refuse?
    2. Add a field `name = "cubic"` to the model and train again: what is the gradient's
       `name` field?
    3. Train with `lr=1.5`. What happens to the loss, and why? Find the largest learning rate
       that still converges.
    """),
]


# --- 5. Dual numbers -------------------------------------------------------------------------

DUAL_NUMBERS = [
    md("""
    # 5. Dual numbers and forward mode

    Forward mode carries, next to every value, its *variation*: how fast it changes when the
    inputs move in a chosen direction. A **dual number** `Dual(x, dx)` is such a pair, and
    numpy code runs on it unchanged: each operation computes its value and, by its forward
    rule, its variation.
    """),
    code("""
    import numpy as np
    import tapegrad
    from tapegrad import Dual

    x = Dual(0.5, 1.0)
    print(x * np.sin(x))
    print(0.5 * np.sin(0.5), np.sin(0.5) + 0.5 * np.cos(0.5))
    """, name="dual"),
    md("""
    One pass gives the value and the derivative along one direction. That is the opposite
    trade to reverse mode: one forward pass per *input*, against one reverse sweep per
    *output*.

    ## The Haaland friction factor, three ways

    The Haaland equation approximates the Darcy friction factor of pipe flow from the
    roughness `eps`, the diameter `D` and the Reynolds number `Re`:
    """),
    code("""
    def haaland(eps, D, Re):
        return 1 / (-1.8 * np.log10((eps / D / 3.7) ** 1.11 + 6.9 / Re)) ** 2

    args = (0.01, 1.0, 3000.0)
    print(haaland(*args))
    """, name="haaland"),
    md("""
    **1. Dual numbers.** `tapegrad.jvp(f, args, tangents)` runs `f` on `Dual(arg, tangent)`
    and returns the value and the variation. Three inputs need three passes, one per unit
    direction:
    """),
    code("""
    by_dual = []
    for direction in np.eye(3):
        value, derivative = tapegrad.jvp(haaland, args, tuple(direction))
        by_dual.append(derivative)
    print(*by_dual)
    """, name="by-dual"),
    md("""
    **2. By hand, in SSA form.** Write the function one primitive per line, each line a new
    name: this is the tape written by hand. The reverse sweep then goes through the lines from
    the last to the first, and the adjoint `b_k = ∂f/∂y_k` of each line is computed from the
    adjoints of the lines that use `y_k`:
    """),
    code("""
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
    """, name="by-hand"),
    md("""
    **3. Reverse mode.** One sweep for all three:
    """),
    code("""
    value_by_grad, (_, *by_grad) = tapegrad.grad(haaland, *args)

    worst = 0.0
    for name, d, h, g in zip(["eps", "D", "Re"], by_dual, by_hand, by_grad):
        print(f"d/d{name:<3}  dual {d: .15e}   hand {h: .15e}   grad {g: .15e}")
        worst = max(worst, abs(d - g) / abs(g), abs(h - g) / abs(g))
    print(f"largest relative difference {worst:.1e}; agree to 1e-10: {worst < 1e-10}")
    """, name="three-ways"),
    md("""
    They agree to the last digit or two: all three apply the same chain rule, in different
    orders, so they differ only in rounding.

    ## A linear solve on dual numbers

    If the matrix of a linear system varies, `A(t) x(t) = b`, differentiating gives
    `dA x + A dx = 0`, so `dx = -A⁻¹ (dA x)`. `np.linalg.solve` on a dual matrix computes the
    value and this variation, reusing one factorization of `A` for both:
    """),
    code("""
    A = np.array([[4.0, 1.0], [2.0, 3.0]])
    dA = np.array([[0.0, 1.0], [0.0, 0.0]])
    b = np.array([1.0, 2.0])

    x = np.linalg.solve(Dual(A, dA), b)
    print(x)
    print(np.linalg.solve(A, b), -np.linalg.solve(A, dA @ np.linalg.solve(A, b)))
    """, name="solve"),
    md("""
    ## A removable singularity

    The thin-plate spline `φ(r) = r² log|r|` is used in interpolation. At `r = 0` the formula
    gives `0 · (−∞)`, but the limit is 0, and so is the limit of the derivative
    `2r log|r| + r`. The formula cannot be evaluated there, and neither can its derivative:
    """),
    code("""
    def phi_formula(r):
        return r ** 2 * np.log(np.abs(r))

    with np.errstate(divide="ignore", invalid="ignore"):
        value, slope = tapegrad.jvp(phi_formula, (0.0,), (1.0,))
    print(value, slope)
    """, name="formula-at-0"),
    md("""
    The fix is to make `φ` a primitive that treats `r == 0` itself, and to give it a forward
    rule, `@tapegrad.frule(fn)`, with the derivative worked out by hand. The rule receives the
    variations of the arguments (a tuple, one per argument) and the arguments' values, and
    returns the value and its variation. With the rule, forward mode never differentiates
    `log` at all: it evaluates the formula for the slope.
    """),
    code("""
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
    """, name="thin-plate"),
    md("""
    ## An Euler integrator with a preallocated trajectory

    Forward mode pays one pass per input direction; a simulation with a few parameters and
    one loss is the other case, where one reverse pass gives the whole gradient. Here is
    the integrator every course writes, as it is written: a trajectory preallocated with
    `np.zeros` and filled row by row. Inside a traced function the buffer takes traced
    values (see the README's conventions), so the loss is differentiated with respect to
    the parameters `p = (k, c)` of the damped oscillator `x'' = -k x - c x'` *and* its
    initial state `u0 = (x0, v0)`.
    """),
    code("""
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
    """, name="euler"),
    code("""
    h = 1e-6
    def central(f, x, i):
        e = np.zeros_like(x); e[i] = h
        return (f(x + e) - f(x - e)) / (2 * h)

    print(np.round([central(lambda q: loss(q, u0), p, i) for i in range(2)], 6))
    print(np.round([central(lambda w: loss(p, w), u0, i) for i in range(2)], 6))
    """, name="euler-check"),
    md("""
    At 0 the rule answers with the limits; at 1 the value is `1 · log 1 = 0` and the slope is
    `2 log 1 + 1 = 1`.

    Why not rely on the branch alone? Without the rule, forward mode would run the body on
    the dual number, and at 0 the variation of `0.0 * r` is 0: the right slope, but by luck.
    The branch only says what the *value* is at one point; the rule says what the
    *derivative* is. Reverse mode needs a reverse rule, `@tapegrad.rrule(thin_plate)`,
    written the same way (see notebook 2); without one, `grad` traces through the body.

    **Exercise.**
    1. Compute the Jacobian of `lambda v: haaland(*v)` at `args` with
       `tapegrad.jacobian(..., mode="fwd")` and with `mode="rev"`. How many passes does each
       make? Which mode would you choose for a function of 1000 inputs and 1 output?
    2. Check the dual solve against finite differences:
       `(np.linalg.solve(A + h*dA, b) - np.linalg.solve(A - h*dA, b)) / (2*h)`.
    3. Write the reverse rule of `thin_plate` and check `tapegrad.grad(thin_plate, r)` at
       0 and 1.
    4. Print the tape of one Euler step (`tapegrad.trace(euler, p, u0, n=2)`): which op
       stands for `traj[1] = ...`? Then take the Jacobian of the final state with respect
       to `u0` with `tapegrad.jacobian(lambda w: euler(p, w)[-1], u0, mode="rev")`.
    """),
]


# --- 6. SSA, simplify, prune -------------------------------------------------------------------

SSA_SIMPLIFY_PRUNE = [
    md("""
    # 6. SSA, simplification and dead code

    Tracing works on any function that computes with numpy, and `grad` is such a function.
    Tracing `grad(f, ...)` therefore records the *gradient computation itself* as a tape: a
    straight-line program in SSA form that a compiler can clean up. Take `f = m x + b`:
    """),
    code("""
    import numpy as np
    import tapegrad

    def f(m, x, b):
        return m * x + b

    value, tape = tapegrad.trace(lambda m, x, b: tapegrad.grad(f, m, x, b), 2.0, 3.0, 1.0)
    print(tape)
    """, name="traced-grad"),
    md("""
    The outer trace sees only what the rules compute with numbers: the forward pass `m * x`
    and `+ b`, then the pullback of `multiply` on the seed 1.0, `1.0 * x` and `1.0 * m`. The
    pullback of `add` passes the seed on unchanged, so no op computes `df/db`: it is the
    constant `1.0`. The last op, `build`, puts the results back into the structure `grad`
    returns.

    `tapegrad.explain` shows the same sweep as you would write it by hand, with adjoints:
    """),
    code("""
    tapegrad.explain(f, 2.0, 3.0, 1.0)
    """, name="explain"),
    md("""
    ## The tape as Python source

    `tapegrad.to_source` writes a tape as a Python function, one line per op:
    """),
    code("""
    print(tapegrad.to_source(tape, "grad_f"))
    """, name="source"),
    md("""
    `simplify` applies algebraic rewrites such as `1.0 * x → x` and `x + 0 → x`. If we only
    want the gradient, the value `m * x + b` becomes **dead code**: nothing returned depends
    on it. `prune` removes such ops:
    """),
    code("""
    _, gradient_tape = tapegrad.trace(lambda m, x, b: tapegrad.grad(f, m, x, b)[1], 2.0, 3.0, 1.0)
    before = tapegrad.to_source(gradient_tape, "df")
    after = tapegrad.to_source(tapegrad.prune(tapegrad.simplify(gradient_tape)), "df")
    print(before)
    print(after)
    print(len(before.splitlines()), "lines ->", len(after.splitlines()), "lines")
    """, name="simplify-prune"),
    md("""
    What is left is the whole derivative of `m x + b`: `(x, m, 1)`. The passes return new
    tapes with the same values, so they can be checked by running them:
    """),
    code("""
    program = tapegrad.compile_tape(tapegrad.prune(tapegrad.simplify(gradient_tape)))
    print(program(None, 2.0, 3.0, 1.0), program(None, 5.0, -1.0, 0.0))
    """, name="compiled-tape"),
    md("""
    ## Common subexpressions

    In `g(x) = x sin(x) + sin(x)` the forward pass computes `sin(x)` twice, and the pullbacks
    of the two `sin` calls both compute `cos(x)`. `cse` (common subexpression elimination)
    computes each repeated pure call once; `tapegrad.optimize` applies `simplify`, `cse` and
    `prune` in turn:
    """),
    code("""
    def g(x):
        return x * np.sin(x) + np.sin(x)

    _, tape_g = tapegrad.trace(lambda x: tapegrad.grad(g, x)[1], 0.5)
    print(tapegrad.to_source(tape_g, "dg"))
    print(tapegrad.to_source(tapegrad.cse(tape_g), "dg"))
    print(tapegrad.to_source(tapegrad.optimize(tape_g), "dg"))
    """, name="cse"),
    md("""
    From twelve operations to five: `sin`, `cos`, and the three that combine them into the
    derivative `cos(x) + sin(x) + x cos(x)`. The value `x sin(x) + sin(x)` itself is gone: the
    lambda returns only the gradient, so `prune` removed it.

    ## Compiled gradients

    `tapegrad.compiled_grad(f)` does all of this once per kind of input: trace the gradient
    program, optimize it, compile its source to Python, and run the compiled function on later
    calls instead of tracing again.
    """),
    code("""
    grad_f = tapegrad.compiled_grad(f)
    print(grad_f(2.0, 3.0, 1.0))
    print(grad_f(5.0, -1.0, 0.0))
    print(grad_f.source(2.0, 3.0, 1.0))
    """, name="compiled-grad"),
    md("""
    ## Pictures

    `tapegrad.to_dot` writes a tape as Graphviz DOT text, and `tapegrad.draw` shows it in a
    notebook: as a picture when Graphviz is installed, as a table of the dump otherwise.
    Forward ops are blue, backward ops orange and accumulations red diamonds.
    """),
    code("""
    y, back = tapegrad.pullback(lambda a, b: a / (a + b * b), 2.0, 3.0)
    back(1.0)
    dot = tapegrad.to_dot(back.tape)
    print(len(dot.splitlines()), "lines of DOT; the accumulation of a:")
    print(next(line for line in dot.splitlines() if "accumulate d%2" in line))
    tapegrad.draw(back.tape)
    """, name="draw"),
    md("""
    **Exercise.**
    1. Trace the gradient of `lambda x: np.sum(x * x)` at an array and print its source before
       and after `tapegrad.optimize`. Which lines remain? What is the constant the source
       calls `c_ndarray` (hint: what does the pullback of `np.sum` do with its `dy`)?
    2. `simplify` leaves `0 * x` alone unless called with `assume_finite=True`. Find an `x`
       for which `0 * x` is not 0.
    3. Trace the gradient of `power(x, n)` from notebook 3 with `n = 3`, optimize it, and read
       the guard that remains. Why must `prune` keep guards even though nothing uses their
       values?
    """),
]


NOTEBOOKS = {
    "01_tracing.ipynb": TRACING,
    "02_build_your_own_ad.ipynb": BUILD_YOUR_OWN_AD,
    "03_pullbacks_and_closures.ipynb": PULLBACKS_AND_CLOSURES,
    "04_pullback_and_accumulation.ipynb": PULLBACK_AND_ACCUMULATION,
    "05_dual_numbers.ipynb": DUAL_NUMBERS,
    "06_ssa_simplify_prune.ipynb": SSA_SIMPLIFY_PRUNE,
}

METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}


def build():
    """``{file name: notebook}``, every cell with a stable id (its name, or ``c<number>``)."""
    out = {}
    for filename, cells in NOTEBOOKS.items():
        cells = [nbformat.from_dict(dict(c)) for c in cells]  # copies: build() can run twice
        for i, cell in enumerate(cells):
            if not cell["id"]:
                cell["id"] = f"c{i:02d}"
        ids = [c["id"] for c in cells]
        assert len(set(ids)) == len(ids), f"{filename}: duplicate cell ids"
        nb = new_notebook(cells=cells, metadata=METADATA)
        nbformat.validate(nb)
        out[filename] = nb
    return out


def main():
    NOTEBOOK_DIR.mkdir(exist_ok=True)
    for filename, nb in build().items():
        nbformat.write(nb, str(NOTEBOOK_DIR / filename))
        print("wrote", NOTEBOOK_DIR / filename)


if __name__ == "__main__":
    main()
