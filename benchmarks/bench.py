"""edutorch's benchmark script: edutorch vs hand-written NumPy vs PyTorch, side by side.

    python benchmarks/bench.py [--quick] [--only SUBSTRING[|SUBSTRING...]] [--files engine,nn]
                               [--samples N] [--json PATH] [--clock wall|cpu]

Every module ``benchmarks/scenarios/*.py`` has a ``scenarios()`` function that
returns a list of dicts::

    {"name": "3-op chain tanh(x*1.0001+0.001) n=1000 fwd+bwd",
     "contenders": {"edutorch": fn, "numpy": fn_or_None, "torch": fn_or_None},
     "limits": {"torch": 1.0, "numpy": None, "ms": None},
     "setup_note": "..."}

Optional: ``"measured_limits": {"mem": {"value": 1.01, "limit": 1.2, "pass": True}}``,
verdicts the scenario measured itself while it was built (e.g. peak memory in a
subprocess); they are shown and counted like the timing limits.

Optional: ``"pairs": {"torch on/off": (on_fn, off_fn)}``, two more functions
timed the same way (interleaved, paired rounds) whose ratio is shown beside the
row without a limit: e.g. PyTorch's own cost of its profiler or autocast, next
to edutorch's ``/numpy`` on/off ratio.

Each ``fn()`` runs ONE repetition (setup happened when the dict was built).
This script runs the contenders interleaved (A B C A B C ...) so that the
machine's load drifts onto all of them alike, prints a table of medians and the
ratios edutorch/torch and edutorch/numpy (the median of the per-round ratios), marks each limit
PASS/FAIL and writes ``benchmarks/results.json``.

Threads: BLAS and torch's OpenMP pool are limited to one thread BEFORE numpy or
torch is imported; with more, the two libraries stall each other on small
machines and ratios swing wildly (see ``benchmarks/README.md``).
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
ORDER = ("edutorch", "numpy", "torch")


def load_scenarios(only=None, files=None):
    """Import every ``scenarios/*.py`` (or those named in ``files``) and collect the scenario dicts
    they return; ``only`` keeps the names containing one of its ``|``-separated parts."""
    sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing
    found = []
    parts = None if only is None else [p.lower() for p in only.split("|")]
    for path in sorted((HERE / "scenarios").glob("*.py")):
        if path.name.startswith("_") or files is not None and path.stem not in files:
            continue
        spec = importlib.util.spec_from_file_location(f"bench_scenarios_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            items = module.scenarios()
        except Exception as exc:  # one broken file must not hide the others
            print(f"[bench] {path.name}: could not build scenarios: {exc!r}", file=sys.stderr)
            continue
        for item in items:
            if parts is None or any(p in item["name"].lower() for p in parts):
                item.setdefault("source", path.name)
                found.append(item)
    return found


# wall: time.perf_counter (the default; what a user waits).  cpu: time.thread_time,
# the CPU time of this thread only, steadier on a machine shared with other jobs
# (but blind to GPU work and to other threads, so never use it for "cuda" rows).
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
clock = time.perf_counter


def calibrate(fn, target_s):
    """How many calls of ``fn`` make one timed sample of about ``target_s`` seconds."""
    fn()  # warm-up (imports, caches, first allocation)
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(target_s / once))


def measure(contenders, samples, target_s):
    """Interleave the contenders sample by sample; return each one's seconds per call, per sample.

    Before each timed sample of more than one call, one untimed call: the sample then
    starts with this contender's arrays in the caches, not those of the contender
    before it or the garbage collection between rounds (which otherwise land on
    whichever contender runs first in a round).
    """
    loops = {name: calibrate(fn, target_s) for name, fn in contenders.items()}
    times = {name: [] for name in contenders}
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection landing in one contender's sample is noise, not cost
    try:
        for _ in range(samples):
            for name, fn in contenders.items():
                n = loops[name]
                if n > 1:
                    fn()  # the untimed warm-up call
                t0 = clock()
                for _ in range(n):
                    fn()
                times[name].append((clock() - t0) / n)
            gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()
    return times


def paired_ratio(mine, other):
    """The median over rounds of mine[i] / other[i].

    Samples of one round (A B C) run back to back, so they share the machine's
    load of that moment; the ratio within a round cancels most of the drift
    that the ratio of two separate medians would keep.
    """
    return statistics.median(a / b for a, b in zip(mine, other))


def measure_pairs(pairs, samples, target_s):
    """``{label: (fn_a, fn_b)}`` -> ``{label: paired ratio a/b}``, timed as the contenders are."""
    ratios = {}
    for label, (a, b) in pairs.items():
        times = measure({"a": a, "b": b}, samples, target_s)
        ratios[label] = paired_ratio(times["a"], times["b"])
    return ratios


def check_limits(medians, ratio, limits):
    """PASS/FAIL for each limit that applies (a missing contender leaves it unchecked)."""
    verdicts = {}
    mine = medians.get("edutorch")
    if mine is None:
        return verdicts
    for key, bound in (limits or {}).items():
        if bound is None:
            continue
        if key == "ms":
            value = mine * 1e3
        elif key in ratio:
            value = ratio[key]
        else:
            continue
        verdicts[key] = {"value": value, "limit": bound, "pass": value <= bound}
    return verdicts


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    return f"{seconds * 1e3:8.2f} ms"


def run(args):
    global clock
    clock = CLOCKS[args.clock]
    scenarios = load_scenarios(args.only, args.files and args.files.split(","))
    samples = args.samples or (5 if args.quick else 15)
    target_s = 0.01 if args.quick else 0.04
    rows = []
    header = f"{'scenario':58s} {'edutorch':>11s} {'numpy':>11s} {'torch':>11s} {'/numpy':>7s} {'/torch':>7s}  limits"
    print(header)
    print("-" * len(header))
    for sc in scenarios:
        contenders = {k: sc["contenders"][k] for k in ORDER if sc["contenders"].get(k) is not None}
        try:
            times = measure(contenders, samples, target_s)
        except Exception as exc:
            print(f"{sc['name'][:58]:58s} ERROR {exc!r}")
            rows.append({"name": sc["name"], "error": repr(exc)})
            continue
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        ratio = {k: paired_ratio(times["edutorch"], times[k]) for k in ("numpy", "torch")
                 if k in times and "edutorch" in times}
        verdicts = check_limits(medians, ratio, sc.get("limits"))
        verdicts.update(sc.get("measured_limits", {}))  # verdicts measured while building it (e.g. memory)
        marks = " ".join(
            f"{k}<={v['limit']}:{'PASS' if v['pass'] else 'FAIL'}" for k, v in verdicts.items()
        )
        pairs = measure_pairs(sc.get("pairs", {}), samples, target_s)
        marks += "".join(f"  {k} {v:.2f}" for k, v in pairs.items())
        print(
            f"{sc['name'][:58]:58s} {fmt_time(medians.get('edutorch')):>11s} "
            f"{fmt_time(medians.get('numpy')):>11s} {fmt_time(medians.get('torch')):>11s} "
            f"{ratio.get('numpy', float('nan')):7.2f} {ratio.get('torch', float('nan')):7.2f}  {marks}",
            flush=True,
        )
        rows.append({
            "name": sc["name"], "source": sc["source"], "setup_note": sc.get("setup_note", ""),
            "median_s": medians, "ratio": ratio, "limits": verdicts, "pairs": pairs,
        })
    failed = [r["name"] for r in rows if any(not v["pass"] for v in r.get("limits", {}).values())]
    print(f"\n{len(rows)} scenarios, {len(failed)} with a failed limit")
    for name in failed:
        print(f"  FAIL: {name}")
    result = {"machine": platform.platform(), "python": platform.python_version(),
              "quick": args.quick, "clock": args.clock, "scenarios": rows}
    out = Path(args.json) if args.json else HERE / "results.json"
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return 1 if args.strict and failed else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter samples")
    parser.add_argument("--only", help="run scenarios whose name contains this (case-insensitive; a|b: either)")
    parser.add_argument("--files", help="build only these scenario files (comma-separated stems: engine,nn)")
    parser.add_argument("--samples", type=int, help="timed samples per contender (default 15, 5 with --quick)")
    parser.add_argument("--json", help="where to write the results (default benchmarks/results.json)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a limit fails")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall (default) or cpu: this thread's CPU time, steadier on a busy machine")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
