"""Machine instructions per call of a benchmark scenario, counted by valgrind: a clock-free measure.

    python benchmarks/count_instructions.py --only "b8 (nn" --files training [--calls 100] [--contender numpy]

On a machine shared with other jobs even the thread's CPU time moves by 20% or
more between two runs, so two trees (main and a branch) cannot be told apart by
the clock when they differ by a few per cent.  The number of instructions the
CPU executes for the same Python code is the same on every run: this script
runs the scenario's contender under ``valgrind --tool=cachegrind
--cache-sim=no`` twice, with ``N`` and ``2N`` calls after one warm-up call, and
prints ``(I(2N) - I(N)) / N``: the instructions of one call, start-up and
imports cancelled.  The cyclic garbage collector is off during the calls: a
collection walks the whole heap (millions of instructions) and would fall in
one of the two runs and not the other.  ``N`` must be large for a small
scenario: with 50 calls of one op (~60 k instructions each) two runs of the
same tree differed by a third (the allocators' one-off work, a few million
instructions, divided by ``N``); with 400 they agree within 1%.  Run it from each tree (``PYTHONPATH`` set to that tree) and
compare.  It says nothing about cache misses or memory bandwidth (large arrays),
only about the work done, which is what Python overhead is.

PyTorch is not imported (``sys.modules["torch"] = None``): under valgrind its
import alone takes minutes, and its contender is not counted.
"""
import argparse
import gc
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _inner(args):
    """Inside valgrind: build the scenario, call its contender once, then ``args.calls`` times."""
    sys.modules["torch"] = None  # the scenarios see "torch not installed"
    sys.path.insert(0, str(HERE))
    import bench

    found = bench.load_scenarios(args.only, args.files and args.files.split(","))
    if not found:
        raise SystemExit(f"no scenario matches {args.only!r}")
    fn = found[0]["contenders"][args.contender]
    fn()
    gc.collect()
    gc.disable()  # a collection of the whole heap would land in one run and not the other
    for _ in range(args.calls):
        fn()
    print(found[0]["name"], file=sys.stderr)


def _start(args, calls):
    """Start one valgrind run with ``calls`` calls (the two runs go side by side)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, __file__, "--inner", "--calls", str(calls), "--only", args.only,
               "--contender", args.contender] + (["--files", args.files] if args.files else [])
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)


def _result(process):
    """Instructions of a whole run (valgrind's ``I refs``), and the scenario's name."""
    stderr = process.communicate()[1]
    match = re.search(r"I\s+refs:\s+([\d,]+)", stderr)
    if process.returncode != 0 or match is None:
        raise SystemExit(stderr[-3000:])
    name = next((line for line in stderr.splitlines() if not line.startswith(("==", "--"))), "?")
    return int(match.group(1).replace(",", "")), name


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", required=True, help="the first scenario whose name contains this")
    parser.add_argument("--files", help="build only these scenario files (comma-separated stems)")
    parser.add_argument("--calls", type=int, default=200, help="N (default 200)")
    parser.add_argument("--contender", default="edutorch", choices=("edutorch", "numpy"))
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        return _inner(args)
    runs = [_start(args, args.calls), _start(args, 2 * args.calls)]
    (few, name), (many, _) = [_result(run) for run in runs]
    per_call = (many - few) / args.calls
    print(f"{name}: {per_call / 1e3:,.1f} k instructions per call ({args.contender})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
