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
