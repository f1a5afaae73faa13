"""KNOWN: the disagreements with PyTorch that are known and being fixed (issue 23).

A fuzzed program that disagrees with PyTorch is counted as *known* (not a
failure) when it matches one of these entries' ``matches(program, ref, got)``;
each entry also has a minimal ``example`` that ``test_fuzz.py`` runs as a
strict xfail, so an entry whose bug got fixed turns the suite red until it is
deleted here.  Delete an entry when its fix is merged.

The predicates read the program's structure: which ops ran, on what shapes,
and which names are views of the same tensor (``roots``).
"""
from __future__ import annotations

from dataclasses import dataclass

from fuzz_ops import OPS


# --- reading a program -------------------------------------------------------------------
def kind(step):
    return OPS[step.op].kind if step.op in OPS else "fn"


def is_inplace(step):
    return step.target is not None


def roots(program):
    """name -> the name of the tensor whose memory it shares (itself when not a view)."""
    root = {}
    for step in program.steps:
        aliased = (kind(step) in ("view", "multi") or (kind(step) == "layer" and step.target)
                   or step.op == "nn.Identity")  # Identity returns its input itself
        for name in step.outputs:
            root[name] = root.get(step.inputs[0], step.inputs[0]) if aliased else name
    return root


def written_after(program, index, names):
    """Is any tensor sharing memory with ``names`` written in place after step ``index``?"""
    root = roots(program)
    wanted = {root.get(n, n) for n in names}
    return any(is_inplace(s) and root.get(s.target, s.target) in wanted for s in program.steps[index + 1:])


# --- the entries -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Known:
    issue: str  # what is wrong, as in issue 23
    matches: object  # matches(program, ref, got) -> bool
    example: str  # a minimal program (run on both libraries; must still disagree)


KNOWN = {
    # --- found after the trust branches were merged (views, nnops): still open --------------------
    # --- found by the long runs after the layout fixes: still open -------------------------------
    "expanded-writes": Known(
        "writes into an expand()/broadcast_to() view are refused here (a read-only NumPy broadcast view) where "
        "PyTorch runs: fill_/zero_/threshold_/masked_fill_/index_fill_ (kernels without PyTorch's overlap "
        "check), a write through a sub-view without repeated elements (v[0] = 1 of an expand of size-1 "
        "dims), an empty narrow of it",
        lambda p, ref, got: got.error is not None and "more than one element of the written-to tensor" in got.error[2]
        and (ref.error is None or ref.error[0] != got.error[0]),
        "x = torch.tensor([[-1.28], [1.19], [0.46]], dtype=torch.float64)\nv = x.expand((3, 3))\nv.fill_(0.75)"),
    "size-1-dim-strides": Known(
        "kron of a tensor with size-1 dims whose strides differ from PyTorch's (x.T[:] of a (1, 3) tensor): "
        "NumPy gives size-1 dims other strides than PyTorch's view does, and they decide TensorIterator's "
        "order of a later product, so kron's final view is refused on one side only (layout.py)",
        lambda p, ref, got: any(s.op == "kron" for s in p.steps) and (ref.error is None) != (got.error is None),
        "x = torch.tensor([[2.29, -1.2, -2.36]], dtype=torch.float64)\nv = x.T[:]\n"
        "y = torch.kron(v, torch.tensor([[-1.01], [1.21]], dtype=torch.float64))"),
}


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None
