"""Engine scenarios: the cost of one op, one recorded op, a short chain, a long chain, a tiny MLP.

These measure edutorch's per-op and per-node bookkeeping, the thing that
decides whether small teaching models feel instant.  Every scenario has a
hand-written NumPy contender (the floor: the same arithmetic with no autograd)
and a PyTorch contender when ``import torch`` works.  A CUDA section runs when
CuPy and a GPU are present (edutorch-CuPy vs PyTorch CUDA) and is skipped
otherwise.
"""
import numpy as np

import edutorch as et

try:
    import torch
except ImportError:  # the torch contenders are simply left out
    torch = None

N = 1000  # elements per tensor in the elementwise scenarios
A, B = 1.0001, 0.001


# -- one op -------------------------------------------------------------------------
def _single_op(requires_grad):
    x_np = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = et.tensor(x_np, requires_grad=requires_grad)
    contenders = {"edutorch": lambda: x * A, "numpy": lambda: x_np * np.float32(A), "torch": None}
    if torch is not None:
        xt = torch.tensor(x_np, requires_grad=requires_grad)
        contenders["torch"] = lambda: xt * A
    kind = "recorded (requires_grad)" if requires_grad else "no graph"
    return {
        "name": f"one op x*1.0001 n={N}, {kind}",
        "contenders": contenders,
        "limits": {"torch": 1.0 if not requires_grad else None, "numpy": None, "ms": None},
        "setup_note": "the per-op overhead: a Function.apply on a 1000-element float32 tensor",
    }


# -- the 3-op link of issue 2 ---------------------------------------------------------
def _chain3(device="cpu"):
    x_np = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = et.tensor(x_np, requires_grad=True, device=device)

    def edu():
        x.grad = None
        et_sum = (x * A + B).tanh().sum()
        et_sum.backward()
        _sync_edutorch(device)

    def numpy_chain():
        # forward, then backward by hand: d/dx sum(tanh(a x + b)) = (1 - tanh²) * a
        t = np.tanh(x_np * np.float32(A) + np.float32(B))
        t.sum()
        return (np.float32(1) - t * t) * np.float32(A)

    contenders = {"edutorch": edu, "numpy": numpy_chain if device == "cpu" else None, "torch": None}
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        xt = torch.tensor(x_np, requires_grad=True, device=device)

        def torch_chain():
            xt.grad = None
            (xt * A + B).tanh().sum().backward()
            if device == "cuda":
                torch.cuda.synchronize()

        contenders["torch"] = torch_chain
    return {
        "name": f"3-op chain tanh(x*1.0001+0.001).sum() n={N} fwd+bwd" + (" [cuda]" if device == "cuda" else ""),
        "contenders": contenders,
        "limits": {"torch": 1.0, "numpy": None, "ms": None},
        "setup_note": "issue 2's link: PyTorch eager ~25 us, NumPy by hand ~5 us on the reference machine",
    }


def _sync_edutorch(device):
    if device == "cuda":
        import cupy

        cupy.cuda.Device().synchronize()


# -- a long chain: backward must be linear in the number of ops --------------------------
def _chain(n_ops):
    x_np = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = et.tensor(x_np, requires_grad=True)

    def edu():
        x.grad = None
        y = x
        for _ in range(n_ops):
            y = y * A
        y.sum().backward()

    def numpy_chain():
        y = x_np
        for _ in range(n_ops):
            y = y * np.float32(A)
        g = np.ones_like(x_np)
        for _ in range(n_ops):
            g = g * np.float32(A)
        return g

    contenders = {"edutorch": edu, "numpy": numpy_chain, "torch": None}
    if torch is not None:
        xt = torch.tensor(x_np, requires_grad=True)

        def torch_chain():
            xt.grad = None
            y = xt
            for _ in range(n_ops):
                y = y * A
            y.sum().backward()

        contenders["torch"] = torch_chain
    return {
        "name": f"chain of {n_ops} muls n={N} fwd+bwd",
        "contenders": contenders,
        "limits": {"torch": None, "numpy": None, "ms": None},
        "per_op": n_ops,  # bench.py divides by this when comparing chain lengths
        "setup_note": f"{n_ops} recorded ops then one backward; per-op cost = median / {n_ops}",
    }


def _chain_linearity(short, long):
    """N=1000 vs N=10: per-op time of the long chain / per-op time of the short chain."""
    s, l = _chain(short), _chain(long)
    edu_short, edu_long = s["contenders"]["edutorch"], l["contenders"]["edutorch"]
    repeats = long // short

    def short_repeated():
        # the same number of ops as the long chain, as many independent short graphs
        for _ in range(repeats):
            edu_short()

    return {
        "name": f"chain linearity: {long}-op graph vs {repeats} x {short}-op graphs",
        # "numpy" here is the edutorch short-chain baseline, so the ratio column reads
        # (per-op time at N=1000) / (per-op time at N=10); the limit is issue 2's 1.2
        "contenders": {"edutorch": edu_long, "numpy": short_repeated, "torch": None},
        "limits": {"torch": None, "numpy": 1.2, "ms": None},
        "setup_note": "the /numpy column is edutorch(N=1000) / edutorch(100 x N=10): backward is linear in N",
    }


# -- a tiny MLP training step written with raw tensor ops ------------------------------
def _mlp(batch=8, sizes=(64, 64, 64, 10), lr=0.01):
    rng = np.random.default_rng(0)
    ws = [(rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32) for i, o in zip(sizes, sizes[1:])]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    x_np = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y_np = rng.standard_normal((batch, sizes[-1])).astype(np.float32)

    def make_step(lib, params, x, y):
        def step():
            h = x
            for i in range(0, len(params), 2):
                h = h @ params[i] + params[i + 1]
                if i + 2 < len(params):
                    h = h.relu()
            loss = ((h - y) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p.sub_(lr * p.grad)
                    p.grad = None
        return step

    params = []
    for w, b in zip(ws, bs):
        params += [et.tensor(w, requires_grad=True), et.tensor(b, requires_grad=True)]
    contenders = {"edutorch": make_step(et, params, et.tensor(x_np), et.tensor(y_np)), "torch": None}

    np_params = [a.copy() for pair in zip(ws, bs) for a in pair]

    def numpy_step():
        hs, h = [x_np], x_np
        for i in range(0, len(np_params), 2):
            h = h @ np_params[i] + np_params[i + 1]
            if i + 2 < len(np_params):
                h = np.maximum(h, 0)
            hs.append(h)
        g = 2 * (h - y_np) / h.size
        for i in range(len(np_params) - 2, -1, -2):
            a_in = hs[i // 2]
            gw, gb = a_in.T @ g, g.sum(0)
            if i > 0:
                g = (g @ np_params[i].T) * (hs[i // 2] > 0)
            np_params[i] -= lr * gw
            np_params[i + 1] -= lr * gb

    contenders["numpy"] = numpy_step
    if torch is not None:
        t_params = []
        for w, b in zip(ws, bs):
            t_params += [torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)]
        contenders["torch"] = make_step(torch, t_params, torch.tensor(x_np), torch.tensor(y_np))
    name = "-".join(map(str, sizes))
    return {
        "name": f"mlp {name} raw-ops train step b{batch}",
        "contenders": contenders,
        "limits": {"torch": 1.0, "numpy": None, "ms": None},
        "setup_note": "x@W+b, relu, MSE, backward, SGD by hand; torch ~0.35 ms vs numpy ~0.07 ms on the reference machine",
    }


def _cuda_available():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def scenarios():
    found = [
        _single_op(False),
        _single_op(True),
        _chain3(),
        _chain(10),
        _chain(1000),
        _chain_linearity(10, 1000),
        _mlp(),
    ]
    if _cuda_available():
        found.append(_chain3("cuda"))
    return found
