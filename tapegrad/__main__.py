"""``python -m tapegrad``: trace and differentiate the worked example and print its tapes."""
from __future__ import annotations

import sys

import tapegrad
from tapegrad.show.cli import main


def f(a, b):
    return a / (a + b * b)


def demo(out=sys.stdout):
    a, b = 2.0, 3.0
    print(f"f(a, b) = a / (a + b*b) at a = {a}, b = {b}\n", file=out)
    value, tape = tapegrad.trace(f, a, b)
    print("The forward tape, one primitive a line:", file=out)
    print(tape, file=out)
    y, back = tapegrad.pullback(f, a, b)
    grads = back(1.0)
    print("\nThe gradient tape: each primitive as rrule (value, pullback), then the reverse", file=out)
    print("sweep from the seed, one pullback call and its tangent reads per primitive:", file=out)
    print(tapegrad.show.format_tape(back.tape, compact=True), file=out)
    print(f"\nvalue    f(a, b) = {y!r}", file=out)
    print(f"gradient df/da   = {grads[1]!r}", file=out)
    print(f"         df/db   = {grads[2]!r}", file=out)
    print("\nA value has one name in every view: the tapes above, explain, the pictures, the", file=out)
    print("generated source (v4 is %4) and the viewer. Step through this sweep in a browser:", file=out)
    print('  python -m tapegrad "a/(a + b*b)" a=2 b=3 --html sweep.html --svg tape.svg', file=out)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main())
    demo()
