"""The benchmark suite runs, and its ratios are medians of paired samples."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run_module(monkeypatch):
    monkeypatch.setattr(os, "environ", dict(os.environ))  # run.py pins threads in os.environ
    monkeypatch.syspath_prepend(str(ROOT))
    import benchmarks.run

    return benchmarks.run


def test_ratios_are_medians_of_paired_samples(monkeypatch):
    run = _run_module(monkeypatch)
    # the second repeat was slow for both: paired, it cancels (2, 2, 3 -> 2); a ratio of the
    # two medians (6 / 2) would report 3
    res = {"tapegrad": {"status": "ok", "gradient": [2.0, 40.0, 6.0]},
           "numpy": {"status": "ok", "gradient": [1.0, 20.0, 2.0]},
           "torch": {"status": "error"}}
    assert run.paired_ratio(res, "tapegrad", "numpy") == 2.0
    assert run.paired_ratio(res, "tapegrad", "torch") is None
    assert run.fmt_ratio(run.paired_ratio(res, "tapegrad", "torch")) == "—"


def test_peak_memory_lines_compare_with_the_hand_written_gradient(monkeypatch):
    run = _run_module(monkeypatch)
    results = {"W3": {"numpy": {"tracemalloc": 2 << 20}, "tapegrad": {"tracemalloc": 3 << 20},
                      "tapegrad-compiled": {"tracemalloc": 1 << 20}},
               "W4": {"numpy": {"tracemalloc": 800 * 1024}, "tapegrad": {"tracemalloc": "MemoryError: x"}},
               "W6": {"tapegrad": {"tracemalloc": 1024}}}
    assert run.memory_lines(results) == [
        "- W3: hand-written 2.0 MiB; tapegrad 3.0 MiB (1.50×), compiled 1.0 MiB (0.50×) (target ≤ 1.2×)",
    ]


def test_quick_run_checks_times_and_writes_the_report(tmp_path):
    out = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--workloads", "W1",
         "--frameworks", "numpy,tapegrad", "--no-memory", "--repeats", "3", "--output", str(out)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tapegrad       agrees with the reference" in done.stdout
    report = out.read_text()
    assert "## Failures (errors and mismatches: not timed)\n\nNone." in report
    row = next(line for line in report.splitlines() if line.startswith("| W1 | "))
    assert row.count("×") == 1  # tapegrad's time, with its paired ratio to the hand-written one


def test_cold_overhead_script_checks_its_gradients_and_reports_each_measure():
    """benchmarks/cold.py's child checks that its hand-written gradients (with the cache-evicting
    matrix product) agree with tapegrad's, then reports a cold and a hot overhead for W3 and W4."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "cold.py"), "--child", str(ROOT), "--repeats", "2"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    measures = dict(item.split("=") for item in done.stdout.split())
    assert sorted(measures) == ["W3:cold", "W3:hot", "W4:cold", "W4:hot"]
    assert all(abs(float(v)) < 1.0 for v in measures.values())  # seconds: finite, of one small call



def test_cold_segments_split_each_gradient_at_its_matrix_products():
    """``cold.py --segments``: one time per stretch between matrix products, the same number of
    stretches for tapegrad and the hand-written gradient (W3: three products forward and five
    back, so nine stretches; W4: two products, three), cold and hot."""
    import json

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "cold.py"), "--child", str(ROOT), "--repeats", "2",
         "--segments"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    measures = {key: times for key, times in json.loads(done.stdout)}
    assert sorted(measures) == sorted(f"{w}:{mode}:{side}" for w in ("W3", "W4") for mode in ("cold", "hot")
                                      for side in ("tapegrad", "hand"))
    for key, times in measures.items():
        assert len(times) == (9 if key.startswith("W3") else 3), key
        assert all(0 < t < 1.0 for t in times), key  # seconds: each stretch of one small call

# --- second order on the workloads: hessian against finite differences of the gradient ---


def _second_order_problems(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    import benchmarks.hessian

    return benchmarks.hessian


def _differences_of_gradient(f, x, h=1e-5):
    """Central differences of tapegrad.gradient, column by column."""
    import numpy as np
    import tapegrad

    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        cols.append((tapegrad.gradient(f, x + e)[0] - tapegrad.gradient(f, x - e)[0]) / (2 * h))
    return np.stack(cols, axis=-1)


def test_forward_over_forward_timing_checks_the_old_way_and_reports_each_problem(monkeypatch, capsys):
    """``hessian.py --fwd-fwd``: one row per problem, the Hessian checked against the forward
    Jacobian of the forward gradient it is timed against."""
    import re

    _second_order_problems(monkeypatch).main(["--fwd-fwd", "--repeats", "1"])
    rows = capsys.readouterr().out.splitlines()
    assert [r.split(" | ")[0] for r in rows] == ["| W3 last bias (10)", "| six entries"]
    assert all(re.fullmatch(r"\| .* \| fwd-fwd [\d.]+ s \| .* [\d.]+ s \| [\d.]+ \|", r) for r in rows), rows


def test_hessian_of_mlp_loss_in_last_bias(monkeypatch):
    """W3: the Hessian in the last bias is the batch mean of diag(p) - p pᵀ (softmax p), in both modes,
    and agrees with central differences of the gradient."""
    import numpy as np
    import tapegrad

    problems = _second_order_problems(monkeypatch)
    f, b = problems.w3_last_bias()
    params, X, Y = problems.WORKLOADS["W3"].inputs()
    h = X
    for W, c in params[:-1]:
        h = np.tanh(h @ W + c)
    z = h @ params[-1][0] + b
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    closed = (np.diag(p.sum(axis=0)) - p.T @ p) / len(p)
    for mode in ("fwd", "rev"):
        np.testing.assert_allclose(tapegrad.hessian(f, b, mode=mode), closed, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(_differences_of_gradient(f, b), closed, rtol=1e-6, atol=1e-9)


def test_hessian_of_gp_likelihood_in_hyperparameters(monkeypatch):
    """W6: the 2 x 2 Hessian in (lengthscale, variance) agrees with central differences of the
    hand-written gradient, in both modes, and as a tuple argument its blocks are its entries."""
    import numpy as np
    import tapegrad

    problems = _second_order_problems(monkeypatch)
    f, t = problems.w6_hyperparameters()
    _, _, X, y = problems.WORKLOADS["W6"].inputs()
    reference = problems.WORKLOADS["W6"].reference
    h = 1e-5
    expected = np.stack([(np.array(reference(*(t + e), X, y)[1]) - np.array(reference(*(t - e), X, y)[1])) / (2 * h)
                         for e in (np.array([h, 0.0]), np.array([0.0, h]))], axis=-1)
    H = tapegrad.hessian(f, t)
    np.testing.assert_allclose(H, expected, rtol=1e-6)
    np.testing.assert_allclose(tapegrad.hessian(f, t, mode="fwd"), H, rtol=1e-10)
    blocks = tapegrad.hessian(lambda lv: f(lv), (float(t[0]), float(t[1])))
    assert type(blocks) is tuple and type(blocks[0]) is tuple
    np.testing.assert_allclose([[float(v) for v in row] for row in blocks], H, rtol=1e-10)


def test_every_workload_agrees_with_its_hand_written_gradient(monkeypatch):
    """Each workload's tapegrad gradient is its hand-written reference's (W7p, the kernel
    padded beforehand, among them), as run.py checks before it times anything."""
    import numpy as np
    import tapegrad

    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.workloads import NUMPY_EXTRAS, WORKLOADS, compare

    for name in ("W1c", "W7", "W7p"):
        w = WORKLOADS[name]
        args = w.inputs()
        f = w.build(np, **{k: NUMPY_EXTRAS[k] for k in w.extra}) if w.extra else w.build(np)
        value, grads = tapegrad.grad(f, *args)
        ref_value, ref_grads = w.reference(*args)
        assert compare(value, [grads[1 + i] for i in w.wrt], ref_value, ref_grads) == [], name
