"""Second order: forward over reverse against reverse over reverse, on two workloads.

    python benchmarks/hessian.py              # 5 repeats of each; --repeats N to change

Times `tapegrad.hessian(f, x, mode=...)` and `tapegrad.hvp(f, x, v, mode=...)` with
``mode="fwd"`` (a forward-mode pass over the reverse-mode gradient, per direction),
``mode="rev"`` (a reverse pass over the recorded gradient, per gradient entry) and the default
``mode="auto"`` (chosen from the shapes by `tapegrad.second_order.choose_mode`), in turn, on

- W3: the MLP loss as a function of its last bias vector (10 entries, so a 10 x 10 Hessian),
- W6: the Gaussian-process negative log likelihood as a function of its two hyperparameters,
- the scalar chain: W1c's recurrence for 7,500 steps (30,000 scalar ops) in (x0, c),

checks that the modes agree, and prints the median times (seconds), the ratios and what auto
chose as a Markdown table; ``--memory`` adds each mode's peak RSS, one fresh interpreter each.
``--fwd-fwd`` times ``mode="fwd-fwd"`` (one nested dual pass per pair of directions, each pair
once) against the forward Jacobian of the forward gradient it replaced (a pass per ordered
pair), in alternating rounds in this process, on W3's last bias and on a function of 6 entries.
benchmarks/README.md has the numbers.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import tapegrad  # noqa: E402
from tapegrad.scipy.linalg import solve_triangular  # noqa: E402

from benchmarks.workloads import WORKLOADS, build_w3, build_w6  # noqa: E402


def w3_last_bias():
    """The MLP loss of W3 as a function of its last bias vector, and that vector."""
    params, X, Y = WORKLOADS["W3"].inputs()
    loss = build_w3(np)
    hidden, (W, b) = list(params[:-1]), params[-1]

    def of_bias(b):
        return loss(hidden + [(W, b)], X, Y)

    return of_bias, b


def w6_hyperparameters():
    """The GP negative log likelihood of W6 as a function of (lengthscale, variance)."""
    lengthscale, variance, X, y = WORKLOADS["W6"].inputs()
    nll = build_w6(np, solve_triangular=solve_triangular)

    def of_hyperparameters(t):
        return nll(t[0], t[1], X, y)

    return of_hyperparameters, np.array([lengthscale, variance])


#: the scalar chain of the issue: W1c's recurrence x = sin(x)·c + 0.1·x, 7,500 steps (30,000 ops)
CHAIN_STEPS = 7500


def scalar_chain():
    """W1c's recurrence as a function of (x0, c), 30,000 scalar ops, and that point."""
    def chain(v):
        x, c = v[0], v[1]
        for _ in range(CHAIN_STEPS):
            x = np.sin(x) * c + 0.1 * x
        return x

    return chain, np.array([0.3, 1.0001])


PROBLEMS = {"W3 last bias (10)": w3_last_bias, "W6 hyperparameters (2)": w6_hyperparameters,
            "scalar chain, 30,000 ops (2)": scalar_chain}
MODES = ("fwd", "rev", "auto")


def peak_rss_mib(problem, what, mode):
    """Peak RSS (MiB) of a fresh interpreter that builds `problem` and runs `what` once in `mode`."""
    code = (f"import sys; sys.argv = ['x']; import benchmarks.hessian as h, numpy as np, tapegrad\n"
            f"f, x = h.PROBLEMS[{problem!r}]()\n"
            f"v = np.cos(np.arange(x.size, dtype=float))\n"
            f"(tapegrad.hessian(f, x, mode={mode!r}) if {what!r} == 'hessian' else tapegrad.hvp(f, x, v, mode={mode!r}))\n"
            # (VmHWM, this process's own peak: ru_maxrss would keep the parent's peak across fork and exec)
            f"print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    root = pathlib.Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def forward_over_forward(repeats):
    """``hessian(mode="fwd-fwd")`` ÷ the forward Jacobian of the forward gradient, per problem."""
    from tapegrad.second_order import _gradient_of

    def six(x):
        return np.sum(np.sin(x) * np.roll(x, 1)) + np.prod(x[:3]) ** 2
    for name, (f, x) in {"W3 last bias (10)": w3_last_bias(), "six entries": (six, np.linspace(0.1, 0.9, 6))}.items():
        new, old = [], []
        for _ in range(repeats):
            t, H = median_time(lambda: tapegrad.hessian(f, x, mode="fwd-fwd"), 1)
            new.append(t)
            t, J = median_time(lambda: tapegrad.jacobian(_gradient_of(f, "fwd"), x, mode="fwd"), 1)
            old.append(t)
            np.testing.assert_allclose(H, J, rtol=1e-10, atol=1e-12)
        tn, to = statistics.median(new), statistics.median(old)
        print(f"| {name} | fwd-fwd {tn:.4f} s | forward Jacobian of the forward gradient {to:.4f} s | {tn / to:.2f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory", action="store_true", help="also the peak RSS of each mode, one child each")
    parser.add_argument("--fwd-fwd", action="store_true", help="only mode='fwd-fwd' against the n² passes it replaced")
    args = parser.parse_args(argv)
    if args.fwd_fwd:
        return forward_over_forward(args.repeats)
    rows = ["| problem | what | fwd over rev (s) | rev over rev (s) | fwd / rev | auto (s) | auto chose | "
            "auto / best |" + (" peak MiB fwd / rev / auto |" if args.memory else ""),
            "|---|---|---|---|---|---|---|---|" + ("---|" if args.memory else "")]
    for name, make in PROBLEMS.items():
        f, x = make()
        v = np.cos(np.arange(x.size, dtype=float))
        for what, call, directions in [("hessian", lambda m: tapegrad.hessian(f, x, mode=m), x.size),
                                       ("hvp", lambda m: tapegrad.hvp(f, x, v, mode=m), 1)]:
            times = {}
            for _ in range(args.repeats):  # (the modes in turn, so that a drift falls on each alike)
                for m in MODES:
                    t, out = median_time(lambda: call(m), 1)
                    times.setdefault(m, []).append(t)
                    if m == "fwd":
                        of = out
                    elif m == "rev":
                        np.testing.assert_allclose(of, out, rtol=1e-8, atol=1e-12)
            tf, tr, ta = (statistics.median(times[m]) for m in MODES)
            chose = tapegrad.second_order.choose_mode(f, x, directions)
            row = (f"| {name} | {what} | {tf:.4f} | {tr:.4f} | {tf / tr:.2f} | {ta:.4f} | {chose} | "
                   f"{ta / min(tf, tr):.2f} |")
            if args.memory:
                row += " " + " / ".join(f"{peak_rss_mib(name, what, m):.0f}" for m in MODES) + " |"
            rows.append(row)
            print(row, flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
