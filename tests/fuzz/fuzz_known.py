"""KNOWN: the disagreements with PyTorch that are known and being fixed (issue 23).

A fuzzed program that disagrees with PyTorch is counted as *known* (not a
failure) when it matches one of these entries' ``matches(program, ref, got)``;
each entry also has a minimal ``example`` that ``test_fuzz.py`` checks still
disagrees, so an entry whose bug got fixed turns the suite red until it is
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


# (the four classes of issue 23 are fixed: regressions in test_regressions.py)
KNOWN = {
    # --- found by the long runs after those fixes (seed 257, double mode): still open ---------------
    "no-grad-view-own-grad": Known(
        "a view made under no_grad of a tensor that requires grad, given requires_grad_() (it gets a "
        "gradient of its own), then its base written in place: PyTorch still refuses it at backward "
        "(\"A view was created in no_grad mode and its base ... has been modified inplace\"); here "
        "requires_grad_() makes it a plain leaf and backward runs. A fix keeps the stale-view check "
        "(views._StaleViewCheck) on such a leaf's own gradient edge.",
        lambda p, ref, got: got.error is None and ref.error is not None
        and "A view was created in no_grad mode" in ref.error[2],
        "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)\na = x * 1\n"
        "with torch.no_grad(): v = a.diagonal()\nv.requires_grad_()\nwith torch.no_grad(): a.mul_(2.0)\n"
        "loss = (v * v).sum()\nloss.backward()"),
}


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None
