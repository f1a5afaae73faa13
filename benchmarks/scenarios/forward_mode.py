"""Forward vs reverse mode: ``torch.func.jacfwd`` and ``jacrev`` on a wide and a tall function.

jacfwd pushes one tangent per *input* element (a column of the Jacobian per
pass), jacrev pulls one gradient per *output* element (a row per pass).  So
for a wide function (64 inputs, 4 outputs) jacrev needs 4 passes and jacfwd
64; for a tall one (4 inputs, 64 outputs) the other way round.  Each row
times edutorch beside ``torch.func``'s own transform; the pairs beside the
jacfwd rows give jacfwd/jacrev for each library (below 1: forward mode wins).
The NumPy contender is the Jacobian written by hand, ``diag(1 - tanh²) W``.
"""
import numpy as np

import edutorch as et

try:
    import torch
    import torch.func as torch_func
except ImportError:  # the torch contenders are simply left out
    torch = None

SHAPES = {"wide": (4, 64), "tall": (64, 4)}  # (outputs, inputs)


def _case(kind):
    rows, cols = SHAPES[kind]
    rng = np.random.default_rng(0)
    w_np, x_np = rng.standard_normal((rows, cols)) / np.sqrt(cols), rng.standard_normal(cols)
    w, x = et.tensor(w_np), et.tensor(x_np)
    fns = {"edutorch": {"jacfwd": lambda: et.func.jacfwd(lambda v: (w @ v).tanh())(x),
                        "jacrev": lambda: et.func.jacrev(lambda v: (w @ v).tanh())(x)}}
    if torch is not None:
        wt, xt = torch.tensor(w_np), torch.tensor(x_np)
        fns["torch"] = {"jacfwd": lambda: torch_func.jacfwd(lambda v: (wt @ v).tanh())(xt),
                        "jacrev": lambda: torch_func.jacrev(lambda v: (wt @ v).tanh())(xt)}

    def by_hand():
        t = np.tanh(w_np @ x_np)
        return (1 - t * t)[:, None] * w_np

    return rows, cols, fns, by_hand


def scenarios():
    found = []
    for kind in SHAPES:
        rows, cols, fns, by_hand = _case(kind)
        for transform in ("jacfwd", "jacrev"):
            item = {
                "name": f"{transform} {kind} tanh(W x): R^{cols} -> R^{rows}, float64",
                "contenders": {"edutorch": fns["edutorch"][transform], "numpy": by_hand,
                               "torch": fns["torch"][transform] if "torch" in fns else None},
                "limits": {"torch": None, "numpy": None, "ms": None},
                "setup_note": f"{cols if transform == 'jacfwd' else rows} passes "
                              f"({'one per input element' if transform == 'jacfwd' else 'one per output element'})",
            }
            if transform == "jacfwd":
                item["pairs"] = {f"{lib} jacfwd/jacrev": (f["jacfwd"], f["jacrev"]) for lib, f in fns.items()}
            found.append(item)
    return found
