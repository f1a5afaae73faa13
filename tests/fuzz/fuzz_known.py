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


KNOWN = {}  # none open: the last (0d-expand-write-with-graph, seed 279) is fixed


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None
