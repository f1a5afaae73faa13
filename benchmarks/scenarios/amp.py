"""Mixed precision: the MLP training steps of ``training.py`` under ``autocast("cpu")`` (bfloat16).

The edutorch contender is the step with autocast on; the "numpy" column is the
SAME edutorch step with autocast off, so ``/numpy`` reads "on / off"; the torch
contender is PyTorch's step with autocast on, and ``torch on/off`` beside the row
is PyTorch's own on/off ratio on the same step.

The issue asked that autocast add at most 10 % to the step when on, and nothing
when off (with no region active, nothing is registered with
``function.apply_interceptors``: ``Function.apply`` pays one test).  On a CPU the casts are real work whose cost
depends on the hardware: NumPy (ml_dtypes) has no bfloat16 BLAS, so products run
in float32 between two casts, and ml_dtypes' elementwise bfloat16 loops are
slower than float32's; PyTorch's on/off ratio shows what the same casts cost it.
What autocast itself adds, its *bookkeeping* (entering and leaving regions, the
policy lookup per op, the eligibility tests and the weight cast cache, casts
excluded), is measured separately as a share of the step: ``bookkeeping<=0.1``.
"""
import importlib.util
import statistics
import time
from pathlib import Path

import edutorch as et

try:
    import torch
except ImportError:  # the torch contender is simply left out
    torch = None

_spec = importlib.util.spec_from_file_location("bench_scenarios_training_for_amp", Path(__file__).with_name("training.py"))
_training = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_training)

OVERHEAD_LIMIT = 1.10  # autocast on / off, the "adds <= 10 %" (casts included)
BOOKKEEPING_LIMIT = 0.10  # autocast's own bookkeeping, casts excluded: at most 10 % of the step


def _step(lib, sizes, batch, autocast):
    """``training.py``'s step (zero_grad, forward, CE, backward, SGD m0.9), the forward under autocast or not."""
    return _training._framework_step(lib, sizes, batch, lambda: lib.autocast("cpu", enabled=autocast))


def _bookkeeping_share(sizes, batch, steps=40):
    """The share of edutorch's autocast-on step spent deciding what to cast, casts excluded.

    Times, by wrapping them for the measurement, what autocast adds around the
    work: entering and leaving regions, the per-op policy lookup
    (``_cast_function_args``, ``_cast_args``: device, eligibility, the cast
    cache) minus the casts they start (``Tensor.to``), which are real work that
    PyTorch's autocast pays too.  The median over ``steps`` steps of that time
    over the step's time (both measured in the same, wrapped, step).
    """
    from edutorch.amp import autocast_mode as mode

    clock = time.perf_counter
    spent = {"book": 0.0, "cast": 0.0, "depth": 0}

    def timed(fn, key):
        def wrapper(*args, **kwargs):
            outermost = spent["depth"] == 0 if key == "book" else spent["depth"] > 0
            spent["depth"] += key == "book"
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                if outermost:
                    spent[key] += clock() - t0
                spent["depth"] -= key == "book"
        return wrapper

    patched = [(mode, "_cast_function_args"), (mode, "_cast_args"), (mode.autocast, "__enter__"),
               (mode.autocast, "__exit__"), (et.Tensor, "to")]
    originals = [(owner, name, owner.__dict__.get(name)) for owner, name in patched]  # None: inherited
    step = _step(et, sizes, batch, True)
    shares = []
    try:
        for owner, name, _ in originals:
            setattr(owner, name, timed(getattr(owner, name), "cast" if name == "to" else "book"))
        step()
        for _ in range(steps):
            spent["book"] = spent["cast"] = 0.0
            t0 = clock()
            step()
            shares.append((spent["book"] - spent["cast"]) / (clock() - t0))
    finally:
        for owner, name, fn in originals:
            if fn is None:
                delattr(owner, name)
            else:
                setattr(owner, name, fn)
    return statistics.median(shares)


def _scenario(sizes, batch):
    share = _bookkeeping_share(sizes, batch)
    pairs = {}
    if torch is not None:
        pairs["torch on/off"] = (_step(torch, sizes, batch, True), _step(torch, sizes, batch, False))
    return {
        "name": f"autocast on/off: mlp {'-'.join(map(str, sizes))} train step b{batch} (cpu, bfloat16)",
        "contenders": {
            "edutorch": _step(et, sizes, batch, True),
            "numpy": _step(et, sizes, batch, False),
            "torch": _step(torch, sizes, batch, True) if torch is not None else None,
        },
        "limits": {"torch": None, "numpy": OVERHEAD_LIMIT, "ms": None},
        "measured_limits": {"bookkeeping": {"value": share, "limit": BOOKKEEPING_LIMIT,
                                            "pass": share <= BOOKKEEPING_LIMIT}},
        "pairs": pairs,
        "setup_note": "forward + loss under autocast, backward and SGD outside; /numpy: edutorch on / off; "
                      f"/torch: both on; bookkeeping {share:.1%} of edutorch's step; "
                      "torch on/off: PyTorch's own ratio",
    }


def scenarios():
    return [_scenario((784, 256, 128, 10), 128), _scenario((64, 64, 64, 10), 8)]
