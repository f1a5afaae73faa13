"""Gradient checkpointing: saved-tensor memory (N vs about sqrt(N)) and the recomputation's cost.

Memory is counted, not sampled: a ``saved_tensors_hooks`` pack hook adds up the
bytes of every tensor the forward pass saves for backward (what the graph holds
until backward).  For an N-block MLP (``Linear(64, 64)`` + ``ReLU`` per block,
batch 32) each block saves its input, its weight and its ReLU output, so the
total grows like N.  With ``checkpoint_sequential(model, segments=sqrt(N),
use_reentrant=False)`` only the input of each checkpointed segment and the
tensors of the last segment stay: about ``sqrt(N) + N / sqrt(N) = 2 sqrt(N)``
blocks' worth.  The numbers are deterministic and equal to PyTorch's (a test
checks that, ``tests/utils/test_checkpoint.py``).

``memory_rows(lib, depths)`` works with ``edutorch`` or ``torch`` and returns
one dict per depth, ready to plot (lesson 12 does)::

    python benchmarks/scenarios/checkpoint.py      # prints the table for N = 4, 16, 64, 256

The timed rows are one forward + backward of the 16-block MLP, plain and
checkpointed (4 segments): checkpointing costs about one extra forward pass.
"""
import math
from importlib import import_module

import edutorch as et

try:
    import torch
except ImportError:  # the torch contenders are simply left out
    torch = None

WIDTH, BATCH = 64, 32
GROWTH_LIMIT = 2.5  # checkpointed bytes at N=64 / at N=16; sqrt(64 / 16) = 2
SAVING_LIMIT = 0.2  # checkpointed / plain bytes at N=64


def mlp(lib, depth, width=WIDTH):
    """``depth`` blocks of ``Linear(width, width)`` + ``ReLU`` (seeded)."""
    lib.manual_seed(0)
    return lib.nn.Sequential(*[lib.nn.Sequential(lib.nn.Linear(width, width), lib.nn.ReLU())
                               for _ in range(depth)])


def saved_bytes(lib, fn):
    """Run ``fn()``; return the bytes of the tensors its graph saved for backward (a pack hook counts)."""
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return total[0]


def memory_rows(lib, depths=(4, 16, 64, 256), width=WIDTH, batch=BATCH):
    """Saved bytes per depth N, without checkpointing and with ``segments = round(sqrt(N))``."""
    checkpoint_sequential = import_module(lib.__name__ + ".utils.checkpoint").checkpoint_sequential
    rows = []
    for depth in depths:
        model, x = mlp(lib, depth, width), lib.randn(batch, width, requires_grad=True)
        segments = max(1, round(math.sqrt(depth)))
        rows.append({
            "depth": depth,
            "segments": segments,
            "plain_bytes": saved_bytes(lib, lambda: model(x)),
            "checkpoint_bytes": saved_bytes(
                lib, lambda: checkpoint_sequential(model, segments, x, use_reentrant=False)),
        })
    return rows


def _step(lib, segments):
    """One forward + backward of the 16-block MLP, checkpointed in ``segments`` (None: plain)."""
    checkpoint_sequential = import_module(lib.__name__ + ".utils.checkpoint").checkpoint_sequential
    model, x = mlp(lib, 16), lib.randn(BATCH, WIDTH, requires_grad=True)

    def step():
        out = model(x) if segments is None else checkpoint_sequential(model, segments, x, use_reentrant=False)
        out.sum().backward()

    return step


def scenarios():
    rows = {r["depth"]: r for r in memory_rows(et, depths=(16, 64))}
    growth = rows[64]["checkpoint_bytes"] / rows[16]["checkpoint_bytes"]
    saving = rows[64]["checkpoint_bytes"] / rows[64]["plain_bytes"]
    note = ", ".join(f"N={n}: {r['plain_bytes'] / 1024:.0f} KiB plain, {r['checkpoint_bytes'] / 1024:.0f} KiB "
                     f"checkpointed ({r['segments']} segments)" for n, r in rows.items())
    return [
        {
            "name": "MLP 16x(Linear 64+ReLU) b32 fwd+bwd, plain",
            "contenders": {"edutorch": _step(et, None), "numpy": None,
                           "torch": _step(torch, None) if torch is not None else None},
            "limits": {"torch": None, "numpy": None, "ms": None},
            "setup_note": "the baseline of the checkpointed row below",
        },
        {
            "name": "MLP 16x(Linear 64+ReLU) b32 fwd+bwd, checkpoint_sequential(4)",
            "contenders": {"edutorch": _step(et, 4), "numpy": None,
                           "torch": _step(torch, 4) if torch is not None else None},
            "limits": {"torch": None, "numpy": None, "ms": None},
            "measured_limits": {
                "ckpt_growth_16to64": {"value": growth, "limit": GROWTH_LIMIT, "pass": growth <= GROWTH_LIMIT},
                "ckpt/plain_at_64": {"value": saving, "limit": SAVING_LIMIT, "pass": saving <= SAVING_LIMIT},
            },
            "setup_note": f"use_reentrant=False; saved-tensor bytes (pack-hook count): {note}",
        },
    ]


if __name__ == "__main__":
    print(f"{'N':>5} {'segments':>8} {'plain KiB':>10} {'checkpointed KiB':>17} {'ratio':>6}")
    for r in memory_rows(et):
        print(f"{r['depth']:>5} {r['segments']:>8} {r['plain_bytes'] / 1024:>10.0f} "
              f"{r['checkpoint_bytes'] / 1024:>17.0f} {r['checkpoint_bytes'] / r['plain_bytes']:>6.2f}")
