"""The longest tests first, so that the last tests the workers run are short ones.

xdist's ``--dist worksteal`` hands each worker a contiguous half of the collected tests and,
when one runs dry, moves half of the other's queue to it, taken from the tail. The run ends
when the last test ends: a 10 s test that starts near the end leaves the other core idle for
up to 10 s. So the modules holding the tests `SLOWEST` names (those over a second in a
recorded run) are put at the front, by their longest test, each with its slowest tests first,
and the other modules keep pytest's order behind them: what is left for the end, and what is
stolen, is short. A module moves whole, not test by test: split between the workers, each
would pay its first-use costs (imports, caches, a module-scoped fixture) again. A module whose
tests share a module- or session-scoped fixture (the documentation's build, the browser), or
that sets ``SHARED_SETUP = True`` (the notebooks, each run once per process and read by
several tests), keeps its own order too.

``python -m pytest --record-slowest`` records in `SLOWEST` the times of the tests it ran (setup,
call and teardown, as pytest times them), keeping the others'; a name the suite no longer collects is
ignored.
"""
import pathlib

SLOWEST = pathlib.Path(__file__).parent / "slowest.txt"
#: tests shorter than this are not recorded: their order does not matter at the end
RECORDED_SECONDS = 1.0


def read_slowest(path=SLOWEST):
    """``{nodeid: seconds}`` of the recorded file (empty when there is none)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, nodeid = line.split(None, 1)
            out[nodeid] = float(seconds)
    return out


def write_slowest(seconds, path=SLOWEST):
    """Record ``{nodeid: seconds}`` of a run: its tests over `RECORDED_SECONDS` replace what was
    recorded of the tests it ran (a run of a few files keeps the others' times), longest first."""
    kept = {nodeid: s for nodeid, s in read_slowest(path).items() if nodeid not in seconds}
    kept.update(seconds)
    lines = [f"{s:7.2f} {nodeid}" for nodeid, s in sorted(kept.items(), key=lambda kv: -kv[1])
             if s >= RECORDED_SECONDS]
    path.write_text("# seconds (setup + call + teardown) and test of the slowest in a recorded run, written by\n"
                    "# python -m pytest --record-slowest; tests/_schedule.py runs them first\n"
                    + "\n".join(lines) + "\n")


def _shares_module_setup(item) -> bool:
    """Whether the item shares its module's setup: a module- or session-scoped fixture of the
    module, or a module that says so (``SHARED_SETUP = True``: a cache of its own, such as the
    notebooks' runs, filled once per process)."""
    if getattr(getattr(item, "module", None), "SHARED_SETUP", False):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope in ("module", "package", "session") and
               defs[-1].baseid.startswith(item.nodeid.partition("::")[0])
               for defs in info.name2fixturedefs.values())


def longest_first(items, seconds):
    """`items` reordered in place, module by module: the modules with recorded tests first, by
    their longest, then the others in pytest's order; inside a module its recorded tests first,
    longest first, then the rest in order (a module with a shared setup keeps its order)."""
    if not seconds:
        return
    modules = {}
    for item in items:
        modules.setdefault(item.nodeid.partition("::")[0], []).append(item)
    blocks = list(modules.values())
    weight = [max(seconds.get(item.nodeid, 0.0) for item in block) for block in blocks]
    order = sorted(range(len(blocks)), key=lambda b: (-weight[b], b))
    out = []
    for b in order:
        block = blocks[b]
        if weight[b] and not any(_shares_module_setup(item) for item in block):
            block = sorted(block, key=lambda item: -seconds.get(item.nodeid, 0.0))  # (stable)
        out.extend(block)
    items[:] = out
