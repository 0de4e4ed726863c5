"""Build the source distribution, unpack it, and run the test suite from the unpacked copy.

Usage: ``python tools/check_sdist.py [pytest arguments...]`` from anywhere; without arguments
it runs the whole suite. It fails if a file that git tracks is missing from the sdist (when run
from a git checkout), if the tests import tapegrad from anywhere but the unpacked copy, or if
a test fails. The sdist is built with the project's own build backend (setuptools'
``build_meta``, as ``pip`` and ``python -m build`` do), in a temporary directory.
CI runs it after the main suite; ``tests/test_package.py`` runs it on a subset.
"""
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FROM_SDIST = "TAPEGRAD_TESTS_FROM_SDIST"  # set in the suite that runs from an unpacked sdist


def build_sdist(out_dir):
    """Build the sdist of the checkout at ROOT into `out_dir`; return the archive's path."""
    code = ("import sys, setuptools.build_meta as b; "
            "print(b.build_sdist(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", code, str(out_dir)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"building the sdist failed:\n{done.stdout}\n{done.stderr}")
    return pathlib.Path(out_dir) / done.stdout.strip().splitlines()[-1]


def unpack(archive, out_dir):
    """Unpack `archive` into `out_dir`; return the top directory and the relative file names."""
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+: no links or paths out
            tar.extractall(out_dir, filter="data")
        else:  # pragma: no cover - our own archive, just built
            tar.extractall(out_dir)  # noqa: S202
        names = [m.name for m in tar.getmembers() if m.isfile()]
    top = names[0].split("/")[0]
    return pathlib.Path(out_dir) / top, {n.split("/", 1)[1] for n in names}


def tracked_files():
    """The files git tracks in ROOT, or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return {line for line in done.stdout.splitlines() if (ROOT / line).is_file()}


def main(pytest_args):
    with tempfile.TemporaryDirectory(prefix="tapegrad-sdist-") as tmp:
        archive = build_sdist(tmp)
        top, names = unpack(archive, tmp)
        tracked = tracked_files()
        if tracked is not None and tracked - names:
            missing = ", ".join(sorted(tracked - names))
            print(f"the sdist {archive.name} lacks tracked files: {missing}; add them to MANIFEST.in")
            return 1
        env = dict(os.environ, PYTHONPATH=str(top), **{FROM_SDIST: "1"})
        where = subprocess.run([sys.executable, "-c", "import tapegrad; print(tapegrad.__file__)"],
                               cwd=top, env=env, capture_output=True, text=True, check=True).stdout
        if pathlib.Path(where.strip()).parent != top / "tapegrad":
            print(f"the tests would import tapegrad from {where.strip()}, not from {top}")
            return 1
        print(f"{archive.name}: {len(names)} files; running the tests from {top}", flush=True)
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *pytest_args],
                              cwd=top, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
