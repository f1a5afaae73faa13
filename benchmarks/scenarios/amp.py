"""Mixed precision: the MLP training steps of ``training.py`` under ``autocast("cpu")`` (bfloat16).

The contenders are edutorch and PyTorch, both under autocast.  The issue asks
that autocast add at most 10 % to the step when on (a ``measured_limits``
entry: edutorch's step with autocast on / off, paired rounds measured while the
scenario is built) and nothing when off: with no region active, ``Function.apply``
pays one ``is None`` test (``function._autocast_hook``).

On a CPU without bfloat16 matrix units the low precision cannot be faster:
every cast is extra work, and NumPy (ml_dtypes) has no bfloat16 BLAS, so the
products run in float32 between two casts.  PyTorch's own on/off ratio is in the note.
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

OVERHEAD_LIMIT = 1.10  # autocast on / off, the issue's "adds <= 10 %"


def _step(lib, sizes, batch, autocast):
    """``training.py``'s step (zero_grad, forward, CE, backward, SGD m0.9), the forward under autocast or not."""
    ws, bs = _training._init(sizes)
    x_np, y_np = _training._data(sizes, batch)
    model = _training._mlp(lib, sizes, ws, bs)
    loss_fn = lib.nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=_training.LR, momentum=_training.MOMENTUM)
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def step():
        optimizer.zero_grad()
        with lib.autocast("cpu", enabled=autocast):
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return step


def _on_off_ratio(lib, sizes, batch, rounds=15):
    """The median over paired rounds of (step with autocast on) / (step with it off)."""
    on, off = _step(lib, sizes, batch, True), _step(lib, sizes, batch, False)
    on(), off()  # warm up
    ratios = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        on()
        t1 = time.perf_counter()
        off()
        t2 = time.perf_counter()
        ratios.append((t1 - t0) / (t2 - t1))
    return statistics.median(ratios)


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
    ratio = _on_off_ratio(et, sizes, batch)
    torch_ratio = _on_off_ratio(torch, sizes, batch) if torch is not None else None
    torch_note = f"; PyTorch's own on/off ratio here {torch_ratio:.2f}" if torch_ratio is not None else ""
    return {
        "name": f"mlp {'-'.join(map(str, sizes))} train step b{batch} under autocast('cpu', bfloat16)",
        "contenders": {
            "edutorch": _step(et, sizes, batch, True),
            "numpy": None,
            "torch": _step(torch, sizes, batch, True) if torch is not None else None,
        },
        "limits": {"torch": None, "numpy": None, "ms": None},
        "measured_limits": {"on/off": {"value": ratio, "limit": OVERHEAD_LIMIT, "pass": ratio <= OVERHEAD_LIMIT}},
        "setup_note": f"forward + loss under autocast, backward and SGD outside; edutorch on/off {ratio:.2f}"
                      + torch_note,
    }


def scenarios():
    return [_scenario((784, 256, 128, 10), 128), _scenario((64, 64, 64, 10), 8)]
