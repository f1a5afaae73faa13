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


def _refused_only_by_pytorch(ref, got, message):
    return ref.error is not None and got.error is None and ref.error[2].startswith(message)


def _made_before_its_base_required_grad(program, ref, got):
    """An in-place op on a view made while its base did not require grad, refused by PyTorch only."""
    if not _refused_only_by_pytorch(ref, got, "a leaf Variable that requires grad is being used in an in-place"):
        return False
    made_without_grad = {n for s in program.steps if kind(s) in ("view", "multi") and not any(s.grads)
                         for n in s.outputs}
    return any(is_inplace(s) and s.target in made_without_grad for s in program.steps)


KNOWN = {
    "lazy-view-regeneration": Known(
        issue="PyTorch regenerates a view's grad_fn lazily: a view made while its base did not require grad, "
              "its base then given a graph by an in-place op (x.div_(w)), is still a 'leaf' to PyTorch's "
              "in-place check until something reads its grad_fn, so F.selu_(v) is refused ('a leaf Variable "
              "that requires grad is being used in an in-place operation'); edutorch remakes the view's graph "
              "at once (refresh_views) and runs it (fuzz seed 264000002442)",
        matches=_made_before_its_base_required_grad,
        example="x1 = torch.tensor([[1.15, -0.58], [1.81, -1.07]], dtype=torch.float64)\n"
                "v3 = x1.diagonal()\n"
                "x6 = torch.tensor([[2.14, -0.17], [1.24, -2.15]], dtype=torch.float64, requires_grad=True)\n"
                "x1.div_(x6)\n"
                "F.selu_(v3)",
    ),
}


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None
