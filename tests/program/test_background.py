"""tapegrad.program.background: a long program made by a forked child while eager grads answer the calls."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import tapegrad
from tapegrad import compiled_grad, grad
from tapegrad.program import background, compiled
from tapegrad.scipy import optimize as opt

pytestmark = pytest.mark.skipif(not background.available(), reason="a program is made by a child only where fork is safe")


@pytest.fixture(autouse=True)
def _earlier_tests_threads(monkeypatch):
    """Threads that earlier tests in this worker left are not this module's to judge (one at
    work would keep every child from being forked: `background.alone`); the threads a test
    here starts still count."""
    before = set(threading.enumerate()) - {threading.current_thread()}
    alone = background.alone
    monkeypatch.setattr(background, "alone", lambda threads=None: alone(
        [t for t in threading.enumerate() if t not in before] if threads is None else threads))


def chain(x, c):
    for _ in range(50):
        x = np.sin(x) * c + 0.1 * x
    return x


def assert_same(a, b):
    assert a[0] == b[0]
    assert len(a[1]) == len(b[1])
    for ga, gb in zip(a[1], b[1]):
        assert type(ga) is type(gb) and np.array_equal(ga, gb)


def _state(g):
    info = g.cache_info()
    node = next(iter(g._cache.values()), None)
    stage = None if node is None else (True if node.program is not None else node.pending[0])
    return info["eager"], info["misses"], info["background"], info["hits"], stage


def test_a_long_program_is_made_by_a_child_while_eager_grads_answer(monkeypatch):
    """Past `BESIDE_OPS` ops: call 1 an eager grad, call 2 an eager grad that forks the child,
    then eager grads until the child's program is there, which every later call runs; each
    call returns grad's result exactly, and the program is the one the calls would make."""
    monkeypatch.setattr(compiled, "BESIDE_OPS", 100)  # the chain records 200
    g = compiled_grad(chain)
    states = []
    for call, x in enumerate((0.3, 0.4, 0.5, 0.6)):
        if call == 2:
            g.wait()
        assert_same(g(x, 1.0001), grad(chain, x, 1.0001))
        states.append(_state(g))
    assert states == [(1, 0, 0, 0, None), (2, 0, 0, 0, "child"), (2, 0, 1, 1, True), (2, 0, 1, 2, True)]
    here = compiled_grad(chain, tiers=False)
    assert g.source(0.3, 1.0001) == here.source(0.3, 1.0001)


def test_a_short_program_goes_through_the_tiers(monkeypatch):
    """Under `BESIDE_OPS` ops, and quicker than a fork, no child is forked: the second call traces."""
    monkeypatch.setattr(background, "fork_seconds", 1e9)
    g = compiled_grad(chain)
    g(0.3, 1.0001)
    g(0.3, 1.0001)
    assert _state(g) == (1, 1, 0, 0, "tape")


def test_a_program_whose_eager_grad_outlasts_a_fork_is_made_by_a_child(monkeypatch):
    """Under `BESIDE_OPS` ops, a program of `BESIDE_MIN_OPS` or more whose first eager grad took
    long enough that the call that forks costs at most `BESIDE_CALL` (3) eager grads (by what the
    last fork cost, which `start` measures) is made by a child; a shorter one is not."""
    monkeypatch.setattr(background, "fork_seconds", 0.0)  # any eager grad outlasts a fork
    g, short = compiled_grad(chain), compiled_grad(lambda x: np.sin(x) * x)
    for x in (0.3, 0.4):
        g(x, 1.0001)
        short(x)
    assert _state(g)[4] == "child" and _state(short)[4] == "tape"
    assert 0.0 < background.fork_seconds < 1.0  # the fork was timed
    g.wait()
    assert_same(g(0.5, 1.0001), grad(chain, 0.5, 1.0001))
    assert g.cache_info()["background"] == 1


def test_background_true_and_false_override_the_length():
    on, off = compiled_grad(lambda x: np.sin(x) * x, background=True), compiled_grad(chain, background=False)
    for _ in range(2):
        on(0.5)
        off(0.3, 1.0001)
    assert _state(on)[4] == "child" and _state(off)[4] == "tape"
    on.wait()
    assert on(0.5) == grad(lambda x: np.sin(x) * x, 0.5) and on.cache_info()["background"] == 1


def test_each_path_after_a_failed_guard_is_made_by_a_child_too():
    """A branch the program did not take fails its guard: that call is an eager grad that forks
    a child for the new path; both programs are kept, each gives grad's result."""
    def f(x):
        return np.sin(x) * x if x > 0 else np.exp(x) - x

    g = compiled_grad(f, background=True)
    for x in (1.0, 1.5):
        g(x)
    g.wait()
    assert_same(g(2.0), grad(f, 2.0))
    assert_same(g(-1.0), grad(f, -1.0))  # the guard fails: an eager grad, a child for this path
    g.wait()
    assert_same(g(-2.0), grad(f, -2.0))
    assert_same(g(3.0), grad(f, 3.0))
    info = g.cache_info()
    assert (info["background"], info["programs"], info["hits"], info["retraces"], info["misses"]) == (2, 2, 3, 0, 0)


def test_a_program_the_child_cannot_send_is_made_by_the_calls():
    """A solver's lambda, made inside f, is a function the child cannot send by name: the calls
    trace the program themselves (once), with grad's result all along; `child_error` says why."""
    def f(a):
        return opt.brentq(lambda t: t ** 3 - a, 0.0, 5.0, xtol=1e-14) * a

    g = compiled_grad(f, background=True)
    for call in range(6):
        if call == 2:
            g.wait()
        assert_same(g(2.0), grad(f, 2.0))
    info = g.cache_info()
    assert (info["background"], info["retraces"], info["hits"]) == (0, 1, 1)
    assert "Can't pickle local object" in g.child_error and "f.<locals>.<lambda>" in g.child_error


def test_a_function_that_draws_random_numbers_is_traced_each_call():
    """The child finds the draws (a program would replay them): from then on each call is traced."""
    def f(x):
        return np.sin(x) * np.random.normal()

    g = compiled_grad(f, background=True)
    for call in range(4):
        if call == 2:
            g.wait()
        np.random.seed(call)
        got = g(0.7)
        np.random.seed(call)
        assert_same(got, grad(f, 0.7))
    info = g.cache_info()
    assert (info["traced"], info["background"], info["programs"]) == (2, 0, 0)


def _child_pid(g):
    return next(iter(g._cache.values())).pending[1].pid


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


PARENT = os.getpid()


def _doing_in_a_child(act):
    """sin(x)·x, which first does `act()` where it runs in a child (not in this process)."""
    def f(x):
        if os.getpid() != PARENT:
            act()
        return np.sin(x) * x

    return f


_sleeps_in_a_child = _doing_in_a_child(lambda: time.sleep(30))
_dies_in_a_child = _doing_in_a_child(lambda: os._exit(3))


def test_cache_clear_stops_the_child():
    g = compiled_grad(_sleeps_in_a_child, background=True)
    g(0.5)
    g(0.5)
    pid = _child_pid(g)
    assert not _gone(pid)
    g.cache_clear()
    assert _gone(pid)  # killed and reaped
    assert g(0.5) == grad(_sleeps_in_a_child, 0.5)


def test_a_child_past_its_time_limit_is_stopped_and_the_calls_make_the_program(monkeypatch):
    monkeypatch.setattr(compiled, "BESIDE_LIMIT", 0.0)
    monkeypatch.setattr(compiled, "BESIDE_LIMIT_PER_OP", 0.0)
    g = compiled_grad(_sleeps_in_a_child, background=True)
    g(0.5)
    g(0.5)
    pid = _child_pid(g)
    assert g(0.5) == grad(_sleeps_in_a_child, 0.5)  # the child is stopped; this call traces
    assert _gone(pid)
    assert "ran past 0 s and was stopped" in g.child_error
    info = g.cache_info()
    assert (info["background"], info["retraces"]) == (0, 1)


def test_cloudpickle_waits_for_the_child_and_sends_its_program():
    cloudpickle = pytest.importorskip("cloudpickle")
    import pickle

    g = compiled_grad(chain, background=True)
    g(0.3, 1.0001)
    g(0.3, 1.0001)
    g2 = pickle.loads(cloudpickle.dumps(g))
    assert_same(g2(0.4, 1.0001), grad(chain, 0.4, 1.0001))
    assert g2.cache_info()["hits"] == 1


def _run(script):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_the_child_writes_nothing_and_no_buffered_output_twice():
    """Run as a script whose output is a pipe (block-buffered): what f prints while the child
    traces it goes nowhere, and what the script printed before the fork appears once."""
    done = _run("""
        import numpy as np, tapegrad
        def f(x):
            print("f runs")
            return np.sin(x) * x
        g = tapegrad.compiled_grad(f, background=True)
        print("before", end=" ")
        g(0.5); g(0.5); g.wait(); g(0.5); g(0.6)
        print(g.cache_info()["background"], g.cache_info()["hits"])
    """)
    assert done.stdout == "before f runs\nf runs\n1 2\n"
    assert done.stderr == ""


def test_no_child_outlives_the_interpreter():
    done = _run(f"""
        import os, time, numpy as np, tapegrad
        PARENT = os.getpid()
        def f(x):
            if os.getpid() != PARENT:
                time.sleep(60)
            return np.sin(x) * x
        g = tapegrad.compiled_grad(f, background=True)
        g(0.5); g(0.5)
        print(next(iter(g._cache.values())).pending[1].pid)
    """)
    assert _gone(int(done.stdout))


def test_no_child_is_forked_while_another_thread_is_at_work():
    """A fork while another thread computes can hang the caller (OpenBLAS's fork handler waits
    for that thread's work): with a thread of the user's computing, the calls make the program."""
    stop, running = threading.Event(), threading.Event()
    a = np.ones((40, 40))

    def work():
        running.set()
        while not stop.is_set():
            a @ a

    t = threading.Thread(target=work)
    t.start()
    try:
        running.wait()
        g = compiled_grad(chain, background=True)
        g(0.3, 1.0001)
        g(0.3, 1.0001)
        assert _state(g) == (1, 1, 0, 0, "tape")
    finally:
        stop.set()
        t.join()


def test_parked_threads_leave_the_making_to_a_child():
    """Threads that wait (a progress bar's monitor on an Event, an idle thread pool's workers, as
    Dask's threaded scheduler keeps) cannot compute before they hold the GIL again, which the
    caller keeps until the fork: a child makes the program, and grad's result comes back."""
    from concurrent.futures import ThreadPoolExecutor

    done = threading.Event()
    monitor = threading.Thread(target=done.wait)
    monitor.start()
    joiner = threading.Thread(target=monitor.join)  # (Thread.join: a wait too)
    joiner.start()
    pool = ThreadPoolExecutor(2)
    try:
        assert pool.submit(np.dot, np.ones(3), np.ones(3)).result() == 3.0  # its workers started, now idle
        waiting = [monitor, joiner, *pool._threads]
        for _ in range(500):  # (each reaches its wait within moments of starting)
            if all(background.parked(sys._current_frames().get(t.ident)) for t in waiting):
                break
            time.sleep(0.01)
        assert background.alone(waiting)
        g = compiled_grad(chain, background=True)
        g(0.3, 1.0001)
        g(0.3, 1.0001)
        assert _state(g)[4] == "child"
        g.wait()
        assert_same(g(0.5, 1.0001), grad(chain, 0.5, 1.0001))
        assert g.cache_info()["background"] == 1
    finally:
        done.set()
        joiner.join()
        pool.shutdown()


def test_a_thread_at_work_or_asleep_is_not_parked():
    """Only threading's waits and a pool worker's wait for work count as parked: a thread in
    time.sleep (its next step could be anything) or running Python is at work."""
    stop, started = threading.Event(), threading.Event()

    def sleeper():
        started.set()
        while not stop.is_set():
            time.sleep(0.001)

    t = threading.Thread(target=sleeper)
    t.start()
    try:
        started.wait()
        assert not background.parked(sys._current_frames()[t.ident])
        assert not background.alone([t])
        assert not background.parked(sys._getframe())
        assert not background.parked(None)
    finally:
        stop.set()
        t.join()


@pytest.mark.parametrize("call", ["fork", "pipe"])
def test_no_fork_possible_leaves_the_making_to_the_calls(monkeypatch, call):
    """A fork that fails (no more processes), or the pipe before it (no more descriptors), is no
    error: the second call traces, as the tiers do."""
    def refused():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, call, refused)
    g = compiled_grad(chain, background=True)
    assert_same(g(0.3, 1.0001), grad(chain, 0.3, 1.0001))
    assert_same(g(0.4, 1.0001), grad(chain, 0.4, 1.0001))
    assert _state(g) == (1, 1, 0, 0, "tape")


def test_a_child_that_dies_without_a_word_leaves_the_making_to_the_calls():
    g = compiled_grad(_dies_in_a_child, background=True)
    g(0.5)
    g(0.5)
    g.wait()
    assert g(0.5) == grad(_dies_in_a_child, 0.5)  # traced here
    assert g.child_error == "the child ended without a result"
    info = g.cache_info()
    assert (info["background"], info["retraces"]) == (0, 1)


def test_values_named_in_tapegrad_are_sent_by_name_as_they_are_named_now(monkeypatch):
    """The map of tapegrad's named values is kept between programs (it takes ~10 ms to make): a
    value named after it was made, and a name bound to another value since, still go by the
    name that names them now, and a value no longer named goes by value."""
    import tapegrad.tangents as tangents
    from tapegrad.tangents import Tangent

    assert background.loads(background.dumps([tapegrad.ZERO, np.add])) == [tapegrad.ZERO, np.add]
    assert background.loads(background.dumps(tapegrad.ZERO)) is tapegrad.ZERO
    first, second = Tangent(a=1.0), Tangent(a=2.0)
    monkeypatch.setattr(tangents, "_SENT_BY_NAME", first, raising=False)
    assert background.loads(background.dumps(first)) is first  # named after the map was made
    monkeypatch.setattr(tangents, "_SENT_BY_NAME", second)
    assert background.loads(background.dumps(second)) is second  # the name bound again
    copy = background.loads(background.dumps(first))  # no longer named: by value
    assert copy is not first and copy is not second and copy.a == 1.0


def _named_only_in_the_child():
    """What a child returns: a tapegrad value it named in a module (the caller has no such name)."""
    import tapegrad.tangents as tangents

    tangents._NAMED_IN_THE_CHILD = tangents.Tangent(a=1.0)
    return ("program", tangents._NAMED_IN_THE_CHILD)


def test_a_result_that_will_not_load_here_is_no_program():
    """A child's result that names what this process lacks fails to load: the job gives False
    (the calls make the program) and its error says why."""
    import tapegrad.tangents as tangents

    job = background.start(_named_only_in_the_child, limit=30)
    assert job.wait() is False
    assert not hasattr(tangents, "_NAMED_IN_THE_CHILD")
    assert job.error.startswith("the child's program could not be read (AttributeError: ")


def test_without_a_gil_a_parked_thread_still_keeps_the_making_with_the_calls(monkeypatch):
    """On a free-threaded interpreter nothing keeps a parked thread from waking mid-fork."""
    done = threading.Event()
    t = threading.Thread(target=done.wait)
    t.start()
    try:
        for _ in range(500):
            if background.parked(sys._current_frames().get(t.ident)):
                break
            time.sleep(0.01)
        assert background.alone([t])
        monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
        assert not background.alone([t])
    finally:
        done.set()
        t.join()
