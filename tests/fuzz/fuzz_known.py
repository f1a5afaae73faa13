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


def refused_only_by_pytorch(ref, got, message):
    """For an entry's ``matches``: PyTorch raised an error starting with ``message``, edutorch ran."""
    return ref.error is not None and got.error is None and ref.error[2].startswith(message)


MULTI_VIEW_OPS = ("split", "chunk", "unbind", "tensor_split", "no_grad_unbind")
STALE_MULTI_VIEW = "A view was created in no_grad mode and its base or another view of its base has been modified"


def multi_view_of_a_base_given_grad_later(program, ref, got):
    """A split/unbind output made while its base did not require grad, the base (or a view of it) written
    in place, then the base given ``requires_grad_()``: PyTorch refuses every use of the output."""
    root = roots(program)
    for i, step in enumerate(program.steps):
        if step.op in MULTI_VIEW_OPS and written_after(program, i, step.outputs) and any(
                later.op == "requires_grad_" and root.get(later.inputs[0], later.inputs[0]) ==
                root.get(step.inputs[0], step.inputs[0]) for later in program.steps[i + 1:]):
            return any(isinstance(v, str) and v.startswith("RuntimeError: " + STALE_MULTI_VIEW)
                       for v in ref.final.values()) or (ref.error is not None and STALE_MULTI_VIEW in ref.error[2])
    return False


KNOWN = {
    # found by the forward mode (seed 2750001929, through a tangent), present in every mode: a backward-mode
    # view class (views.py: the stale check is set only on a view that had a node when it was made)
    "multi-view-of-a-base-given-grad-later": Known(
        "a split/unbind output made while its base did not require grad, the base or a sibling written in "
        "place, then base.requires_grad_(): PyTorch refuses the output's use (is_leaf, an op) with 'A view was "
        "created in no_grad mode and its base ... has been modified inplace'; edutorch runs",
        multi_view_of_a_base_given_grad_later,
        "x1 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)\n"
        "v2, v3 = x1.unbind(0)\n"
        "v3.relu_()\n"
        "x1.requires_grad_()",
    ),
}


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None
