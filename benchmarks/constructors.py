"""What numpy's idioms in a trace cost: numpy's functions outside a trace (which must cost what
they cost without tapegrad), the switch every trace makes, and an Euler trajectory written into
a buffer against the same one built by np.stack.

    python benchmarks/constructors.py [--repeats N]

1. ``np.asarray(x)``, ``np.array(list)``, ``np.zeros(3)``, ``np.empty((4, 3))``,
   ``np.zeros_like(x)``, ``np.full(3, 2.0)``, ``np.sum(x)``, ``np.mean(x)``, ``np.append``,
   ``np.r_`` per call, in a child process that imported numpy only and in one that also
   imported tapegrad and took a gradient and a jvp, alternating; the median of the paired ratios
   (with tapegrad ÷ without) is reported. numpy's own functions are in numpy's namespace
   outside a trace, so the ratio is 1 within noise.
2. The same calls in a thread that does not trace while another thread traces (the stand-ins
   are in place then, and hand the call to numpy's function after one check).
3. What every trace adds (`constructors_on` + `constructors_off`: the stand-ins in, numpy's
   own back), against one ``grad`` of ``a / (a + b * b)`` (workload W1).
4. The gradient of a 200-step Euler trajectory written into ``np.zeros((n, 2))``, against the
   same trajectory built as a list and ``np.stack``-ed.
5. Inside a trace: ``np.sum(x)`` and ``np.mean(x)`` of a plain array through the stand-in,
   against numpy's own function; and the gradient of ``np.mean([a, b, c])`` against that of
   ``np.mean(np.array([a, b, c]))``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CALLS = {
    "np.asarray(x)": "np.asarray(x)",
    "np.array([1.0, 2.0])": "np.array([1.0, 2.0])",
    "np.zeros(3)": "np.zeros(3)",
    "np.empty((4, 3))": "np.empty((4, 3))",
    "np.zeros_like(x)": "np.zeros_like(x)",
    "np.full(3, 2.0)": "np.full(3, 2.0)",
    "np.sum(x)": "np.sum(x)",
    "np.mean(x)": "np.mean(x)",
    "np.append(x, 1.0)": "np.append(x, 1.0)",
    "np.r_[1.0, 2.0]": "np.r_[1.0, 2.0]",
}


def per_call(stmt, namespace, number=20000, repeat=7):
    """The best of `repeat` timings of `number` calls, in ns per call."""
    return min(timeit.repeat(stmt, globals=namespace, number=number, repeat=repeat)) / number * 1e9


def child(with_tapegrad):
    """Run in a child process: time each call, print JSON."""
    import numpy as np

    if with_tapegrad:
        sys.path.insert(0, ROOT)
        import tapegrad

        f = lambda a: np.mean([a, 2.0 * a]) * np.sum(np.zeros(2) + a)  # noqa: E731
        tapegrad.grad(f, 1.0)
        tapegrad.jvp(f, (1.0,), (1.0,))
    namespace = {"np": np, "x": np.ones((4, 3))}
    print(json.dumps({name: per_call(stmt, namespace) for name, stmt in CALLS.items()}))


def outside_a_trace(repeats):
    """Median of paired ratios, with tapegrad imported ÷ numpy alone, per call."""
    ratios = {name: [] for name in CALLS}
    times = {name: ([], []) for name in CALLS}
    for i in range(repeats):
        runs = {}
        for flag in ((0, 1) if i % 2 == 0 else (1, 0)):
            out = subprocess.run([sys.executable, __file__, "--child", str(flag)],
                                 capture_output=True, text=True, check=True)
            runs[flag] = json.loads(out.stdout)
        for name in CALLS:
            ratios[name].append(runs[1][name] / runs[0][name])
            times[name][0].append(runs[0][name])
            times[name][1].append(runs[1][name])
    return {name: (statistics.median(times[name][0]), statistics.median(times[name][1]),
                   statistics.median(ratios[name])) for name in CALLS}


def while_another_thread_traces():
    """Per call in this thread, alone and while another thread is inside a trace."""
    import numpy as np

    sys.path.insert(0, ROOT)
    import tapegrad

    namespace = {"np": np, "x": np.ones((4, 3))}
    alone = {name: per_call(stmt, namespace) for name, stmt in CALLS.items()}
    inside, release = threading.Event(), threading.Event()

    def f(a):
        inside.set()
        release.wait(60)
        return a * 2.0

    t = threading.Thread(target=tapegrad.grad, args=(f, 1.0))
    t.start()
    inside.wait(60)
    try:
        during = {name: per_call(stmt, namespace) for name, stmt in CALLS.items()}
    finally:
        release.set()
        t.join()
    return alone, during


def switch_per_trace():
    """ns of one constructors_on + constructors_off pair, and of one grad of W1."""
    sys.path.insert(0, ROOT)
    import tapegrad
    from tapegrad.literals import constructors_off, constructors_on

    def switch():
        constructors_on()
        constructors_off()

    def w1(a, b):
        return a / (a + b * b)

    s = min(timeit.repeat(switch, number=20000, repeat=7)) / 20000 * 1e9
    g = min(timeit.repeat(lambda: tapegrad.grad(w1, 1.5, 0.7), number=2000, repeat=7)) / 2000 * 1e9
    return s, g


def euler_buffer_against_stack(n=200):
    """µs per gradient of an Euler trajectory: preallocated buffer, and list + np.stack."""
    import numpy as np

    sys.path.insert(0, ROOT)
    import tapegrad

    def buffer(p, u0):
        traj = np.zeros((n, 2))
        traj[0] = u0
        for i in range(n - 1):
            x, v = traj[i]
            traj[i + 1] = traj[i] + 0.01 * np.array([v, -p[0] * x - p[1] * v])
        return np.sum(traj[:, 0] ** 2)

    def stacked(p, u0):
        rows = [u0]
        for _ in range(n - 1):
            x, v = rows[-1]
            rows.append(rows[-1] + 0.01 * np.array([v, -p[0] * x - p[1] * v]))
        return np.sum(np.stack(rows)[:, 0] ** 2)

    p, u0 = np.array([4.0, 0.3]), np.array([1.0, 0.0])
    out = {}
    for name, f in (("buffer", buffer), ("stack", stacked)):
        out[name] = min(timeit.repeat(lambda: tapegrad.grad(f, p, u0), number=5, repeat=5)) / 5 * 1e6
    return out


def reductions_in_a_trace():
    """ns per np.sum(x)/np.mean(x) of a plain array inside a trace (the stand-in) and outside
    it (numpy's own), and µs per gradient of np.mean of a list against np.mean of np.array."""
    import numpy as np

    sys.path.insert(0, ROOT)
    import tapegrad
    from tapegrad.literals import REDUCTIONS

    x = np.ones((4, 3))
    out = {}
    for name in ("sum", "mean"):
        own = REDUCTIONS[name]
        timings = {}

        def f(a, name=name):
            stand_in = getattr(np, name)
            timings["in"] = per_call("fn(x)", {"fn": stand_in, "x": x})
            timings["own"] = per_call("fn(x)", {"fn": own, "x": x})
            return a * 2.0

        tapegrad.grad(f, 1.0)
        out[f"np.{name}(x)"] = (timings["own"], timings["in"])

    def listed(a, b, c):
        return np.mean([a, b * c, c])

    def arrayed(a, b, c):
        return np.mean(np.array([a, b * c, c]))

    for name, g in (("np.mean([a, b*c, c])", listed), ("np.mean(np.array([...]))", arrayed)):
        out[name] = min(timeit.repeat(lambda: tapegrad.grad(g, 1.0, 2.0, 3.0), number=2000,
                                      repeat=7)) / 2000 * 1e6
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(bool(args.child))
        return
    print("1. outside a trace: ns per call, numpy alone / with tapegrad imported, paired ratio")
    for name, (a, b, r) in outside_a_trace(args.repeats).items():
        print(f"   {name:22s} {a:8.0f} {b:8.0f}   {r:.3f}")
    print("2. in a thread that does not trace: ns per call, alone / while another thread traces")
    alone, during = while_another_thread_traces()
    for name in CALLS:
        print(f"   {name:22s} {alone[name]:8.0f} {during[name]:8.0f}")
    s, g = switch_per_trace()
    print(f"3. per trace: {s:.0f} ns ({s / g:.1%} of one grad of W1, {g:.0f} ns)")
    e = euler_buffer_against_stack()
    print(f"4. Euler, 200 steps, per gradient: buffer {e['buffer']:.0f} µs, list + np.stack "
          f"{e['stack']:.0f} µs")
    r = reductions_in_a_trace()
    print("5. inside a trace: ns per call, numpy's own / through the stand-in")
    for name in ("np.sum(x)", "np.mean(x)"):
        own, stand_in = r[name]
        print(f"   {name:22s} {own:8.0f} {stand_in:8.0f}")
    print(f"   per gradient: np.mean([a, b*c, c]) {r['np.mean([a, b*c, c])']:.1f} µs, "
          f"np.mean(np.array([...])) {r['np.mean(np.array([...]))']:.1f} µs")


if __name__ == "__main__":
    main()
