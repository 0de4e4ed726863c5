"""Benchmark tapegrad against the hand-written gradient, autograd, PyTorch and JAX.

    python benchmarks/run.py            # full run, a few minutes
    python benchmarks/run.py --quick    # about a minute
    python benchmarks/run.py --workloads W1,W3 --frameworks numpy,tapegrad,torch

Every framework's value and gradient are first checked against the hand-written reference
(relative error 1e-6); a mismatch or an error is reported loudly and that combination is not
timed. Then forward and gradient calls are timed side by side, interleaving the frameworks in
each repeat, and medians are reported. The table is printed and written to
benchmarks/RESULTS.md. See benchmarks/README.md for how to read it.
"""
from __future__ import annotations

import os

# One thread everywhere: set before numpy, jax or torch is imported (here or in a child).
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
os.environ.update(THREAD_ENV)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # quieter XLA start-up

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # benchmark the working tree's tapegrad, and import benchmarks.*

import numpy as np  # noqa: E402
import scipy  # noqa: E402

from benchmarks.frameworks import FRAMEWORKS, Skipped, steady_heap  # noqa: E402
from benchmarks.workloads import WORKLOADS, compare  # noqa: E402

RTOL = 1e-6
MEMORY_MARK = "MEMORY_JSON "
#: blocks below this stay in malloc's heap, so RSS growth below it says nothing
RSS_FLOOR = 65536
#: repeats, and the least time one sample (a loop of calls) should take
SETTINGS = {"quick": (5, 0.005), "full": (15, 0.03)}
#: what `steady_heap` set, for the report
HEAP = "malloc: default"


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------


def time_once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def sample(fn, number):
    """Seconds per call of `fn`, over a loop of `number` calls with the collector off (as timeit)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - t0) / number
    finally:
        if enabled:
            gc.enable()


def calls_for(seconds_per_call, target):
    return max(1, min(100_000, math.ceil(target / max(seconds_per_call, 1e-9))))


def tracemalloc_peak(fn):
    """Peak bytes allocated during one call of `fn`, above what was allocated before, by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
        del result
    finally:
        tracemalloc.stop()
    return peak


def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"no {field} in /proc/self/status")


def rss_peak(fn):
    """Peak growth of the resident set during one call of `fn`, in bytes (Linux only).

    The high-water mark VmHWM is reset to the current RSS by writing 5 to
    /proc/self/clear_refs; the growth is VmHWM after the call minus the RSS before it.
    """
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = _status_kb("VmRSS")
    result = fn()
    peak = _status_kb("VmHWM") - base
    del result
    return max(peak, 0) * 1024


def memory_child(fw_name, workload_names, quick):
    """Run in a subprocess (with malloc returning large blocks to the system): RSS peaks."""
    fw = FRAMEWORKS[fw_name]
    fw.load()
    gc.collect()
    gc.freeze()
    out = {}
    for name in workload_names:
        w = WORKLOADS[name]
        try:
            if fw_name == "jax-jit" and w.n_ops and w.n_ops > 1000:
                out[name] = "not measured (would compile again)"
                continue
            p = fw.prepare(w, w.inputs(), quick)
            p.gradient()
            p.gradient()
            p.reset()
            out[name] = rss_peak(p.gradient)
        except Skipped as e:
            out[name] = str(e)
        except Exception as e:  # noqa: BLE001
            out[name] = f"{type(e).__name__}: {e}"
    print(MEMORY_MARK + json.dumps(out), flush=True)


def run_memory_children(fw_names, results, quick):
    """RSS peaks per framework, each framework in its own process."""
    env = dict(os.environ)
    # every block of 64 KiB or more gets its own mapping and goes back to the system when freed,
    # so that the resident set follows what is live
    env["MALLOC_MMAP_THRESHOLD_"] = str(RSS_FLOOR)
    env["MALLOC_TRIM_THRESHOLD_"] = str(RSS_FLOOR)
    for fw_name in fw_names:
        names = [w for w in results if results[w].get(fw_name, {}).get("status") == "ok"]
        if not names:
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--memory-child", fw_name,
               "--workloads", ",".join(names)] + (["--quick"] if quick else [])
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MEMORY_MARK)]
            if not lines:
                raise RuntimeError(f"exit code {proc.returncode}: {proc.stderr.strip()[-500:]}")
            data = json.loads(lines[-1][len(MEMORY_MARK):])
        except Exception as e:  # noqa: BLE001
            data = {n: f"memory run failed: {type(e).__name__}: {e}" for n in names}
        for n, v in data.items():
            results[n][fw_name]["rss"] = v
        print(f"  {FRAMEWORKS[fw_name].label:14s} ({time.perf_counter() - t0:.1f} s)", flush=True)


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def banner(text):
    line = "!" * 100
    print(f"\n{line}\n{text}\n{line}\n", flush=True)


def short_error(e):
    msg = str(e).strip()
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def check(fw, prepared, w, args, ref_value, ref_grads):
    """Problems with this framework's forward value, value and gradient, vs the reference."""
    value, grads = prepared.convert(prepared.gradient())
    problems = compare(value, grads, ref_value, ref_grads, RTOL)
    fv = prepared.forward()
    fv = float(np.asarray(fv.detach() if hasattr(fv, "detach") else fv))
    if not abs(fv - ref_value) <= RTOL * abs(ref_value):
        problems.append(f"forward value {fv:.17g} vs reference {ref_value:.17g}")
    return problems


def run_workload(w, frameworks, quick, repeats, target):
    print(f"\n=== {w.name}: {w.title}", flush=True)
    t_start = time.perf_counter()
    args = w.inputs()
    ref_value, ref_grads = w.reference(*args)
    res = {}
    ready = {}
    for fw in frameworks:
        r = res[fw.name] = {"status": "ok", "notes": []}
        try:
            p = fw.prepare(w, args, quick)
            r["notes"] += p.notes
            problems = check(fw, p, w, args, ref_value, ref_grads)
        except Skipped as e:
            r.update(status="skipped", message=str(e))
            print(f"  {fw.label:14s} skipped: {e}", flush=True)
            continue
        except Exception as e:  # noqa: BLE001
            r.update(status="error", message=short_error(e))
            banner(f"ERROR: {fw.label} on {w.name} ({w.title}) raised, not timed:\n{short_error(e)}")
            continue
        if problems:
            r.update(status="mismatch", message="; ".join(problems))
            banner(f"MISMATCH: {fw.label} on {w.name} disagrees with the hand-written reference "
                   f"(rtol {RTOL}), not timed:\n" + "\n".join(problems))
            continue
        print(f"  {fw.label:14s} agrees with the reference", flush=True)
        ready[fw.name] = p

    # what exists now stays: keep it out of the collections before each sample
    gc.collect()
    gc.freeze()

    # calibrate: how many calls make one sample
    for name, p in ready.items():
        res[name]["n_forward"] = calls_for(min(time_once(p.forward), time_once(p.forward)), target)
        res[name]["n_gradient"] = calls_for(min(time_once(p.gradient), time_once(p.gradient)), target)
        res[name]["forward"], res[name]["gradient"] = [], []

    # interleave: each repeat runs every framework once, the starting one rotating
    names = list(ready)
    for rep in range(repeats):
        k = rep % max(len(names), 1)
        for name in names[k:] + names[:k]:
            p, r = ready[name], res[name]
            r["forward"].append(sample(p.forward, r["n_forward"]))
            r["gradient"].append(sample(p.gradient, r["n_gradient"]))

    for name, p in ready.items():
        r = res[name]
        r["forward_median"] = statistics.median(r["forward"])
        r["gradient_median"] = statistics.median(r["gradient"])
        if len(r["gradient"]) >= 2:
            q1, _, q3 = statistics.quantiles(r["gradient"], n=4)
            r["gradient_spread"] = (q3 - q1) / r["gradient_median"]
        if FRAMEWORKS[name].memory == "tracemalloc":
            try:
                p.reset()
                r["tracemalloc"] = tracemalloc_peak(p.gradient)
            except Exception as e:  # noqa: BLE001
                r["tracemalloc"] = f"{type(e).__name__}: {e}"
        print(f"  {FRAMEWORKS[name].label:14s} forward {fmt_time(r['forward_median']):>10s}  "
              f"gradient {fmt_time(r['gradient_median']):>10s}", flush=True)
    ready.clear()
    gc.unfreeze()
    gc.collect()
    print(f"  ({time.perf_counter() - t_start:.1f} s)", flush=True)
    return res


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------


def fmt_time(s):
    if s is None:
        return "—"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt_ratio(x):
    if x is None:
        return "—"
    if x < 10:  # three decimals, so that a ratio beside a target (≤ 1.1×) shows which side it is on
        return f"{x:.3f}×"
    return f"{x:.3g}×" if x < 1000 else f"{x:,.0f}×"


def fmt_mem(v, floor=0):
    if v is None:
        return "—"
    if isinstance(v, str):
        return "n/a"
    if v < floor:
        return f"< {floor // 1024} KiB"
    if v < 1024 * 1024:
        return f"{v / 1024:.0f} KiB"
    return f"{v / 1024 / 1024:.1f} MiB"


def memory_lines(results):
    """One line per array workload: the peak tracemalloc measured of tapegrad's gradient (eager
    and compiled) over the hand-written gradient's, against the target of 1.2×."""
    lines = []
    for name in ("W3", "W4", "W6"):
        res = results.get(name, {})
        hand = res.get("numpy", {}).get("tracemalloc")
        if not isinstance(hand, int) or hand <= 0:
            continue
        parts = []
        for fw, label in (("tapegrad", "tapegrad"), ("tapegrad-compiled", "compiled")):
            v = res.get(fw, {}).get("tracemalloc")
            if isinstance(v, int):
                parts.append(f"{label} {fmt_mem(v)} ({v / hand:.2f}×)")
        if parts:
            lines.append(f"- {name}: hand-written {fmt_mem(hand)}; " + ", ".join(parts) + " (target ≤ 1.2×)")
    return lines


def status_cell(r):
    return {"error": "**ERROR**", "mismatch": "**MISMATCH**", "skipped": "skipped",
            "unavailable": "unavailable"}.get(r["status"], r["status"])


def paired_ratio(res, a, b):
    """Median over the repeats of a's gradient sample over b's from the same repeat.

    The two samples of one repeat are taken moments apart, so a slow spell of the machine
    that spans a repeat slows both and leaves their ratio alone; a ratio of two medians
    does not cancel it. None when either framework was not timed.
    """
    ra, rb = res.get(a, {}), res.get(b, {})
    if ra.get("status") != "ok" or rb.get("status") != "ok" or "gradient" not in ra or "gradient" not in rb:
        return None
    return statistics.median(x / y for x, y in zip(ra["gradient"], rb["gradient"]))


def workload_table(w, res, frameworks):
    rows = ["| framework | forward | gradient | gradient/forward | gradient/hand | "
            "µs per op (gradient) | gradient spread (IQR) | peak memory, tracemalloc | peak RSS growth |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for fw in frameworks:
        r = res.get(fw.name)
        if r is None:
            continue
        if r["status"] != "ok":
            rows.append(f"| {fw.label} | {status_cell(r)} | | | | | | | |")
            continue
        fwd, g = r["forward_median"], r["gradient_median"]
        per_op = f"{g / w.n_ops * 1e6:.3g}" if w.n_ops else ""
        tm = fmt_mem(r.get("tracemalloc")) if fw.memory == "tracemalloc" else "—"
        spread = f"±{50 * r['gradient_spread']:.0f}%" if "gradient_spread" in r else "—"
        rows.append(
            f"| {fw.label} | {fmt_time(fwd)} | {fmt_time(g)} | {fmt_ratio(g / fwd)} | "
            f"{fmt_ratio(paired_ratio(res, fw.name, 'numpy'))} | {per_op} | {spread} | {tm} | "
            f"{fmt_mem(r.get('rss'), RSS_FLOOR)} |")
    return "\n".join(rows)


def summary_table(results, frameworks):
    head = "| workload | " + " | ".join(fw.label for fw in frameworks) + " |"
    rows = [head, "|---|" + "---:|" * len(frameworks)]
    for name, res in results.items():
        cells = []
        for fw in frameworks:
            r = res.get(fw.name)
            if r is None:
                cells.append("")
            elif r["status"] != "ok":
                cells.append(status_cell(r))
            else:
                g = r["gradient_median"]
                hand = paired_ratio(res, fw.name, "numpy") if fw.name != "numpy" else None
                cells.append(f"{fmt_time(g)} ({fmt_ratio(hand)})" if hand is not None else fmt_time(g))
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def ratio_table(results, base, others):
    """Gradient time of `base` divided by each of `others`', per workload."""
    rows = ["| workload | " + " | ".join(f"{FRAMEWORKS[base].label} / {FRAMEWORKS[o].label}" for o in others) + " |",
            "|---|" + "---:|" * len(others)]
    for name, res in results.items():
        cells = [fmt_ratio(paired_ratio(res, base, o)) for o in others]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_name():
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg["Build Dependencies"]["blas"]
        return f"{b.get('name', '?')} {b.get('version', '')}".strip()
    except Exception:  # noqa: BLE001
        return "unknown"


def git_revision():
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "tapegrad"], cwd=ROOT,
                               env=env, capture_output=True, timeout=10).returncode
        return rev + (" (with uncommitted changes in tapegrad/)" if dirty == 1 else "") if rev else "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


def environment_lines(frameworks, unavailable, quick, repeats, target, elapsed):
    n_proc = 0
    try:
        with open("/proc/cpuinfo") as fh:
            n_proc = sum(1 for line in fh if line.startswith("processor"))
    except OSError:
        pass
    lines = [
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- command: `python benchmarks/run.py{' --quick' if quick else ''}` "
        f"({repeats} repeats, each sample at least {target * 1e3:.0f} ms of calls); the run took "
        f"{elapsed:.0f} s",
        f"- machine: {cpu_model()}, {n_proc or os.cpu_count()} cores ({os.cpu_count()} usable), "
        f"{platform.system()} {platform.machine()}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}), numpy "
        f"{np.__version__} (BLAS: {blas_name()}), scipy {scipy.__version__}",
    ]
    for fw in frameworks:
        if fw.name == "numpy" or fw.name in unavailable:
            continue
        v = fw.version()
        if fw.name == "tapegrad":
            v = f"{v}, commit {git_revision()}"
        if fw.name == "jax-jit":
            continue
        lines.append(f"- {fw.label.split(' ')[0]}: {v}")
    for name, why in unavailable.items():
        lines.append(f"- {FRAMEWORKS[name].label}: **unavailable** ({why})")
    threads = ", ".join(f"{k}={v}" for k, v in THREAD_ENV.items())
    tn = ""
    if "torch" in sys.modules:
        tn = f"; torch.get_num_threads() = {sys.modules['torch'].get_num_threads()}"
    lines.append(f"- threads: {threads}{tn}")
    lines.append(f"- {HEAP}")
    return lines


def build_report(results, frameworks, unavailable, quick, repeats, target, elapsed):
    out = ["# tapegrad benchmark results", "",
           "Written by `benchmarks/run.py`; benchmarks/README.md says how to read it.", ""]
    out += environment_lines(frameworks, unavailable, quick, repeats, target, elapsed)
    out += ["", "## Summary: gradient time (median), × the hand-written gradient (median of paired "
            "ratios, see below)", "",
            summary_table(results, frameworks), ""]
    others = [o for o in ("numpy", "autograd", "torch", "jax", "jax-jit")
              if any(f.name == o for f in frameworks)]
    if any(f.name == "tapegrad" for f in frameworks) and others:
        out += ["## tapegrad's gradient time ÷ each peer's (below 1: tapegrad is faster; medians of "
                "paired ratios)", "",
                ratio_table(results, "tapegrad", others), ""]
    memory = memory_lines(results)
    if memory:
        out += ["## Peak memory of tapegrad's gradient ÷ the hand-written gradient's (tracemalloc)", "",
                *memory, ""]
    out += ["## Per workload", ""]
    for name, res in results.items():
        w = WORKLOADS[name]
        wrt = ", ".join(str(i) for i in w.wrt)
        out += [f"### {name}: {w.title}", "",
                f"Gradient with respect to argument{'s' if len(w.wrt) > 1 else ''} {wrt}."
                + (f" {w.n_ops} primitive ops ({w.ops_note})." if w.n_ops else ""), "",
                workload_table(w, res, frameworks), ""]
    failures, notes = [], []
    for name, res in results.items():
        for fw in frameworks:
            r = res.get(fw.name)
            if r is None:
                continue
            if r["status"] in ("error", "mismatch"):
                failures.append(f"- **{fw.label}, {name}** ({r['status']}): `{r['message']}`")
            elif r["status"] == "skipped":
                notes.append(f"- {fw.label}, {name}: {r['message']}")
            for n in r.get("notes", []):
                notes.append(f"- {fw.label}, {name}: {n}")
            if isinstance(r.get("rss"), str):
                notes.append(f"- {fw.label}, {name}: RSS {r['rss']}")
    out += ["## Failures (errors and mismatches: not timed)", ""]
    out += failures or ["None."]
    out += ["", "## Notes", ""]
    out += notes or ["None."]
    out += ["", "## How it was measured", "",
            "- Before timing, each framework's value and gradient were compared with the "
            f"hand-written NumPy reference (relative error ≤ {RTOL:g}, per gradient leaf: max |diff| "
            "/ max |reference|).",
            "- Times are medians over the repeats; in each repeat every framework runs one "
            "sample of forward calls and one of gradient calls, the starting framework rotating. "
            "A sample is a loop of calls lasting at least the target time, with the garbage "
            "collector off (as timeit does).",
            "- forward: the function alone (plain numpy for numpy and tapegrad, autograd.numpy on "
            "plain arrays, torch under no_grad, jax eager or jitted). gradient: value and gradient "
            "(tapegrad.grad, autograd.value_and_grad, loss.backward(), jax.value_and_grad). "
            "gradient/hand: this gradient time over the hand-written gradient's.",
            "- Ratios between frameworks (gradient/hand, the ratio table, the × in the summary) "
            "are medians of paired ratios: in each repeat, one framework's sample over the "
            "other's from the same repeat. A slow spell of the machine slows both samples of a "
            "repeat and cancels in their ratio; it would not cancel in a ratio of two medians.",
            "- µs per op: gradient time divided by the workload's count of primitive ops.",
            "- peak memory, tracemalloc: the peak of allocations traced by tracemalloc during one "
            "gradient call above what was allocated before it (numpy-based frameworks only: "
            "tracemalloc does not see torch's or XLA's buffers).",
            "- peak RSS growth (all frameworks): in a separate process per framework with "
            "MALLOC_MMAP_THRESHOLD_=65536 (so freed blocks leave the resident set), after two "
            "warm-up calls, the high-water mark is reset (`5 > /proc/self/clear_refs`) and the "
            "growth of VmHWM over the resident set during one gradient call is reported. Blocks "
            "under 64 KiB stay in malloc's heap and are reused, so growth under 64 KiB is shown "
            "as `< 64 KiB`.",
            "- gradient spread: half the interquartile range of the gradient samples over their "
            "median, the noise of that number (this is a shared VM: differences within the "
            "spread mean nothing).", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, shorter samples, no W1c JIT")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, e.g. W1,W3")
    ap.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                    help=f"comma-separated, from {','.join(FRAMEWORKS)}")
    ap.add_argument("--repeats", type=int, help="override the number of repeats")
    ap.add_argument("--no-memory", action="store_true", help="skip the RSS measurement subprocesses")
    ap.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"), help="where to write the table")
    ap.add_argument("--default-malloc", action="store_true",
                    help="leave glibc's malloc settings as a user's process has them (by default freed blocks "
                         "are kept in the heap, for every framework alike: see frameworks.steady_heap)")
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    wl_names = [n.strip() for n in a.workloads.split(",") if n.strip()]
    fw_names = [n.strip() for n in a.frameworks.split(",") if n.strip()]
    for n in wl_names:
        if n not in WORKLOADS:
            ap.error(f"unknown workload {n!r}; choose from {', '.join(WORKLOADS)}")
    for n in fw_names:
        if n not in FRAMEWORKS:
            ap.error(f"unknown framework {n!r}; choose from {', '.join(FRAMEWORKS)}")

    if a.memory_child:
        memory_child(a.memory_child, wl_names, a.quick)
        return 0

    global HEAP
    # the same allocator settings for every framework (see there), or glibc's defaults
    HEAP = "malloc: glibc's defaults (--default-malloc)" if a.default_malloc else steady_heap()
    t_start = time.perf_counter()
    repeats, target = SETTINGS["quick" if a.quick else "full"]
    repeats = a.repeats or repeats
    frameworks, unavailable = [], {}
    for n in fw_names:
        fw = FRAMEWORKS[n]
        try:
            fw.load()
            frameworks.append(fw)
            print(f"{fw.label:14s} {fw.version()}", flush=True)
        except Exception as e:  # noqa: BLE001
            unavailable[n] = short_error(e)
            banner(f"{fw.label} is unavailable: {short_error(e)}")

    results = {}
    for n in wl_names:
        results[n] = run_workload(WORKLOADS[n], frameworks, a.quick, repeats, target)
        for u, why in unavailable.items():
            results[n][u] = {"status": "unavailable", "message": why, "notes": []}
    if not a.no_memory:
        print("\n=== peak RSS growth, one process per framework", flush=True)
        run_memory_children([fw.name for fw in frameworks], results, a.quick)

    elapsed = time.perf_counter() - t_start
    shown = frameworks + [FRAMEWORKS[u] for u in unavailable]
    shown.sort(key=lambda fw: list(FRAMEWORKS).index(fw.name))
    report = build_report(results, shown, unavailable, a.quick, repeats, target, elapsed)
    print("\n" + report)
    with open(a.output, "w") as fh:
        fh.write(report)
    print(f"\nwritten to {os.path.relpath(a.output)}")
    bad = [(n, f) for n, res in results.items() for f, r in res.items() if r["status"] in ("error", "mismatch")]
    if bad:
        print(f"{len(bad)} framework/workload pairs failed: "
              + ", ".join(f"{f} on {n}" for n, f in bad), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
