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


KNOWN = {}


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None


# --- fuzzops8 (issue 23, the op families added for every differentiable op) --------------------------
def _saved_result_written(node):
    """PyTorch refused backward because ``node`` kept a result that was written since; edutorch ran."""
    def matches(program, ref, got):
        return (refused_only_by_pytorch(ref, got, "one of the variables needed for gradient computation")
                and f"which is output 0 of {node}," in ref.error[2])
    return matches


def _only_retained_grads_of(ops, program, ref, got):
    """A double-backward program whose only differences are the ``.grad`` of results of ``ops``."""
    from fuzz_program import differences

    if not program.double or ref.error or got.error:
        return False
    outputs = {name for step in program.steps if step.op in ops for name in step.outputs}
    lines = differences(ref, got, program)
    return bool(lines) and all(line.split(".grad:")[0] in outputs for line in lines)


KNOWN.update({
    "std-mean-one-node": Known(
        "torch.std_mean / var_mean are one node in PyTorch (StdMeanBackward0 keeps the input and the std, "
        "VarMeanBackward0 the input): writing one of them, then a backward through the mean alone, refuses "
        "there; edutorch's two nodes (std or var, and mean) run",
        lambda program, ref, got: (_saved_result_written("StdMean")(program, ref, got)
                                   or (_uses("std_mean", "var_mean")(program) and refused_only_by_pytorch(
                                       ref, got, "one of the variables needed for gradient computation"))),
        "x = torch.tensor([[0.5, -1.2, 0.3], [1.1, 0.4, -0.7]], dtype=torch.float64, requires_grad=True)\n"
        "s, m = torch.std_mean(x, 1)\n"
        "s.mul_(2)\n"
        "m.sum().backward()"),
    "pinv-saves-result": Known(
        "torch.linalg.pinv keeps its result (LinalgPinvBackward0): writing it refuses backward there; "
        "edutorch's pinv is a composition over svd and runs. In a double backward PyTorch's formula reads "
        "that result, so a retained .grad of it gets second-order terms that here go to U, S, Vh instead "
        "(the inputs' gradients agree)",
        lambda program, ref, got: (_saved_result_written("LinalgPinv")(program, ref, got)
                                   or _only_retained_grads_of(("pinverse", "linalg_pinv"), program, ref, got)),
        "x = torch.tensor([[0.36], [-1.85], [0.18]], dtype=torch.float64, requires_grad=True)\n"
        "p = torch.pinverse(x)\n"
        "p.mul_(2)\n"
        "p.sum().backward()"),
})


def _uses(*ops):
    def uses(program):
        return any(step.op in ops or any(f"{op}(" in step.code for op in ops) for step in program.steps)
    return uses


def _saved_view_written(*ops):
    """PyTorch refused backward over a saved ``as_strided`` view written since, in a program using ``ops``."""
    uses = _uses(*ops)

    def matches(program, ref, got):
        return (refused_only_by_pytorch(ref, got, "one of the variables needed for gradient computation")
                and "output 0 of AsStrided," in ref.error[2] and uses(program))
    return matches


KNOWN.update({
    "ldexp-saves-result": Known(
        "torch.ldexp is one node keeping its result (LdexpBackward0); edutorch's is x * 2**e, which keeps "
        "no result, so a later write to it runs here and refuses in PyTorch",
        _saved_result_written("Ldexp"),
        "x = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)\n"
        "y = torch.ldexp(x, torch.tensor(2))\n"
        "y.mul_(2)\n"
        "y.sum().backward()"),
    "conv-transpose-saves-input": Known(
        "ConvTranspose2d / F.conv_transpose2d with dilation or output_padding: PyTorch's node keeps the input "
        "even when only the weight needs a gradient, so a later write to the input refuses backward; "
        "edutorch's runs as a convolution of a spread copy of the input, which it keeps instead",
        lambda program, ref, got: (_uses("nn.ConvTranspose2d", "F.conv_transpose2d", "F.conv_transpose2d_nobias")(
            program) and refused_only_by_pytorch(ref, got, "one of the variables needed for gradient computation")),
        "x = torch.tensor([[[[-0.98, 2.06, 0.34], [2.36, -0.46, 1.63]]]], dtype=torch.float64)\n"
        "w = torch.tensor([[[[0.74, -1.16], [0.59, 0.02]]]], dtype=torch.float64, requires_grad=True)\n"
        "v = F.conv_transpose2d(x, w, stride=1, padding=1, output_padding=1, dilation=2)\n"
        "x.abs_()\n"
        "v.sum().backward()"),
    "area-interpolate-saved-input": Known(
        "F.interpolate(mode='area') of a 3-D input is PyTorch's adaptive_avg_pool1d, which saves an "
        "as_strided view of the input: writing the input refuses backward there; edutorch runs",
        _saved_view_written("nn.Upsample", "F.interpolate"),
        "x = torch.tensor([[[0.5, -1.2, 0.3]]], dtype=torch.float64, requires_grad=True)\n"
        "a = x.abs()\n"
        "v = F.interpolate(a, scale_factor=2.5, mode='area')\n"
        "a.mul_(2)\n"
        "v.sum().backward()"),
})
