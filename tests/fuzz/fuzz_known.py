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

import numpy as np

from fuzz_ops import OPS

ZERO_D_DIM_KEYS = ("dim", "dims", "d0", "d1", "dim1", "dim2")
ZERO_D_OPS = {"gelu", "gelu_tanh", "nn.GELU", "norm_dim", "median_dim", "kthvalue", "sort", "topk", "cummax"}
SETITEM_OPS = {"setitem", "setitem_index", "setitem_scalar", "copy_"}
INPLACE_ACTIVATIONS = {"F.relu_", "F.relu_inplace", "F.elu_", "F.leaky_relu_", "F.hardtanh_", "F.threshold_",
                       "F.celu_", "F.selu_", "F.silu_inplace", "F.hardswish_inplace", "F.mish_inplace",
                       "F.hardsigmoid_inplace", "F.relu6_inplace", "F.dropout_inplace", "relu_"}
MATMULS = {"matmul", "matmul_fn", "bmm", "einsum_mm", "tensordot", "linear", "mm", "mv", "dot", "addmm"}


# --- reading a program -------------------------------------------------------------------
def kind(step):
    return OPS[step.op].kind if step.op in OPS else "fn"


def is_inplace(step):
    return step.target is not None


def is_inplace_activation(step):
    return step.op in INPLACE_ACTIVATIONS or (kind(step) == "layer" and step.target is not None)


def roots(program):
    """name -> the name of the tensor whose memory it shares (itself when not a view)."""
    root = {}
    for step in program.steps:
        aliased = (kind(step) in ("view", "multi") or (kind(step) == "layer" and step.target)
                   or step.op == "nn.Identity")  # Identity returns its input itself
        for name in step.outputs:
            root[name] = root.get(step.inputs[0], step.inputs[0]) if aliased else name
    return root


def derived_from(program, ops):
    """Names that are ``ops`` outputs or views of them."""
    out = set()
    for step in program.steps:
        if step.op in ops or (kind(step) in ("view", "multi") and step.inputs and step.inputs[0] in out):
            out |= set(step.outputs)
    return out


def written_after(program, index, names):
    """Is any tensor sharing memory with ``names`` written in place after step ``index``?"""
    root = roots(program)
    wanted = {root.get(n, n) for n in names}
    return any(is_inplace(s) and root.get(s.target, s.target) in wanted for s in program.steps[index + 1:])


def after_op_written(program, ops, same_root=True):
    for i, step in enumerate(program.steps):
        if step.op in ops and (written_after(program, i, step.outputs + step.inputs[:1]) if same_root else
                               any(is_inplace(s) for s in program.steps[i + 1:])):
            return True
    return False


def operand_aliases_target(program, ops):
    root = roots(program)
    for step in program.steps:
        if step.op in ops and step.target:
            target = root.get(step.target, step.target)
            if any(root.get(n, n) == target for n in step.inputs[1:]):
                return True
    return False


# --- the entries -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Known:
    issue: str  # what is wrong, as in issue 23
    matches: object  # matches(program, ref, got) -> bool
    example: str  # a minimal program (run on both libraries; must still disagree)


def _zero_d(program, ref, got):
    for step in program.steps:
        if step.shapes and step.shapes[0] == () and (
                step.op in ZERO_D_OPS or any(k in ZERO_D_DIM_KEYS for k, _ in step.args)):
            return True
    return False


def _view_before_grad_data(program, ref, got):
    root = roots(program)
    for i, step in enumerate(program.steps):
        gets_grad = (is_inplace(step) and any(step.grads[1:])) or step.op == "requires_grad_"
        if step.grads and not step.grads[0] and gets_grad:
            target = root.get(step.inputs[0], step.inputs[0])
            if any(kind(s) in ("view", "multi") and root.get(s.outputs[0]) == target
                   for s in program.steps[:i]):
                return True
    return False


def _expand_write(program, ref, got):
    expanded = derived_from(program, {"expand", "broadcast_to"})
    return any(is_inplace(s) and s.target in expanded for s in program.steps)


def _error_type(program, ref, got):
    return (ref.error is not None and got.error is not None and ref.error[1] == "RuntimeError"
            and got.error[1] == "ValueError"
            and any(s.op in SETITEM_OPS | {"setitem_index"} for s in program.steps))


def _inplace_activations(program, ref, got):
    acts = [s for s in program.steps if is_inplace_activation(s)]
    risky = ("hardswish", "mish", "selu", "Hardswish", "Mish", "SELU")
    return len(acts) >= 2 or any(any(r in s.op for r in risky) for s in acts)


def _broadcast_matmul(program, ref, got):
    for i, step in enumerate(program.steps):
        if step.op in MATMULS and len({len(s) for s in step.shapes}) > 1:
            if written_after(program, i, step.inputs):
                return True
    return False


def _empty_batch_norm(program, ref, got):
    def one_value_per_group(step):  # GroupNorm in training with a single value per group
        shape = step.shapes[0]
        return step.op == "nn.GroupNorm" and int(np.prod(shape[1:])) // dict(step.args)["g"] <= 1
    return any(s.op in ("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.GroupNorm") and s.shapes
               and (0 in s.shapes[0] or one_value_per_group(s)) for s in program.steps)


def _layout(program, ref, got):
    """view() refused on one side only, or a reshape/flatten (a view in PyTorch, a copy here, or the
    other way round) whose input or result is written in place later."""
    errors = [o.error for o in (ref, got) if o.error]
    if any("view size is not compatible" in e[2] for e in errors):
        return True
    return any(step.op in ("reshape", "flatten", "view_as") and written_after(program, i, step.outputs + step.inputs[:1])
               for i, step in enumerate(program.steps))


SAVES_OTHER_TENSORS = {  # ops whose node keeps other tensors than PyTorch's
    # composites that do not keep their input (PyTorch's node does): backward runs where PyTorch refuses
    "celu", "hardtanh", "relu6", "hardsigmoid", "logsigmoid", "softshrink", "hardshrink", "threshold",
    "nn.CELU", "nn.Hardtanh", "nn.ReLU6", "nn.Hardsigmoid", "nn.LogSigmoid", "nn.Softshrink", "nn.Hardshrink",
    "nn.Threshold",
    "F.celu_", "F.hardtanh_", "F.threshold_", "F.relu6_inplace", "F.hardsigmoid_inplace",
    # picked through gather, which keeps the input (PyTorch keeps only the indices): backward refuses;
    # median() keeps no result (PyTorch does): writing the result does not make backward refuse
    "median_dim", "kthvalue", "median",
    # kron keeps an operand that needs no grad (PyTorch's composite does not): backward refuses;
    # xlogy keeps no input (PyTorch's node keeps self): writing it does not make backward refuse
    "kron", "xlogy",
}
EMPTY_OPS = {"softmax", "softmax_m", "log_softmax", "softmin", "nn.Softmax", "nn.LogSoftmax", "tensordot", "cat",
             "cross_entropy", "nll_loss", "nn.Linear", "linear", "kthvalue", "median_dim", "topk",
             "sort", "cummax", "amax", "amin", "max_dim", "min_dim", "nn.AdaptiveAvgPool2d", "nn.Flatten", "flatten"}


def _empty_tensors(program, ref, got):
    return any(s.op in EMPTY_OPS and any(0 in shape for shape in s.shapes) for s in program.steps)


def _saves_other_tensors(program, ref, got):
    """An op of SAVES_OTHER_TENSORS, and later a write into its result or any of its inputs."""
    return any(step.op in SAVES_OTHER_TENSORS and written_after(program, i, step.outputs + step.inputs)
               for i, step in enumerate(program.steps))


KNOWN = {
    "clamp-broadcast-error-type": Known(
        "found by the fuzzer: clamp(min=tensor) with shapes that do not broadcast raises ValueError "
        "(PyTorch: RuntimeError)",
        lambda p, ref, got: any(s.op == "clamp_t" for s in p.steps) and ref.error and got.error
        and ref.error[1] != got.error[1],
        "x = torch.zeros(3, dtype=torch.float64)\ny = x.clamp(min=torch.zeros(3, 2, dtype=torch.float64))"),
    "detach-in-place": Known(
        "found by the fuzzer: detach_() on a view runs (PyTorch: RuntimeError, can't detach views in-place; "
        "not fixable by checking edutorch's view links: Linear on 3-d input and pooling return internal "
        "views where PyTorch's results are not views); detach_() on a tensor saved for backward: backward "
        "runs (PyTorch: RuntimeError, trying to use a saved tensor that has been detached in-place)",
        lambda p, ref, got: any(s.op == "detach_" for s in p.steps),
        "x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)\ny = x * 1\nz = y.sin()\n"
        "y.detach_()\nloss = z.sum()\nloss.backward()"),
    "memory-layout": Known(
        "found by the fuzzer: results keep NumPy's memory layout, not PyTorch's, so view() refuses where "
        "PyTorch accepts (x.t().cumsum(0).view(...)), kron accepts non-contiguous inputs where PyTorch's "
        "view inside kron refuses, and reshape/flatten copy where PyTorch views (or the other way round): "
        "v = x[:, idx]; r = v.reshape(-1); v.neg_() leaves r unchanged here (PyTorch: r is a view, negated, "
        "and its gradient follows): silent wrong values and gradients",
        _layout,
        "x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=torch.float64)\n"
        "y = x.t().cumsum(0)\nz = y.view(6)"),
    "tensordot-broadcast": Known(
        "found by the fuzzer: tensordot refuses a contracted dim of size 1 against another size (PyTorch "
        "broadcasts it)",
        lambda p, ref, got: any(s.op == "tensordot" for s in p.steps) and got.error is not None,
        "a = torch.tensor([1., 2., 3.], dtype=torch.float64)\nb = torch.tensor([[2., 1., 1., 0.5]], "
        "dtype=torch.float64)\ny = torch.tensordot(a, b, dims=1)"),
    "empty-tensors": Known(
        "found by the fuzzer: size-0 tensors: softmax/log_softmax/softmin over a size-0 dim raise ValueError "
        "(NumPy's max of nothing); tensordot and Linear over a size-0 dim raise RuntimeError; "
        "kthvalue/topk/... over a size-0 dim raise RuntimeError (PyTorch: IndexError); nn.Flatten of a batch "
        "of 0 raises; AdaptiveAvgPool2d of empty non-batch dims runs (PyTorch: RuntimeError)",
        _empty_tensors,
        "x = torch.zeros((2, 0), dtype=torch.float64)\ny = F.softmax(x, dim=1)"),
    "saves-other-tensors": Known(
        "found by the fuzzer: activations written as composites (celu, hardtanh, relu6, hardsigmoid, "
        "logsigmoid, softshrink, hardshrink, threshold) do not keep their input, so writing it in place "
        "afterwards does not make backward refuse as in PyTorch; median(dim)/kthvalue keep their input "
        "(through gather), so backward refuses where PyTorch runs; median() and xlogy keep too little, kron "
        "an operand that needs no grad",
        _saves_other_tensors,
        "x = torch.tensor([-1.97, 0.4], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\nv = F.logsigmoid(a)\na.mul_(2)\nloss = v.sum()\nloss.backward()"),
    "diagonal-inplace": Known(
        "in-place on a diagonal() view: wrong gradient, leaf changed, requires_grad not propagated",
        lambda p, ref, got: after_op_written(p, {"diagonal"}),
        "x = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\nd = a.diagonal()\nd.mul_(3)\nloss = (a * a).sum() + d.sum()\nloss.backward()"),
    "retain-grad-inplace": Known(
        "retain_grad() then an in-place op: .grad is for the old value",
        lambda p, ref, got: after_op_written(p, {"retain_grad"}),
        "x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\na.retain_grad()\na.sin_()\nloss = (a * x).sum()\nloss.backward()"),
    "unbind-copies": Known(
        "unbind() outputs: views of a tensor written in place later are not refused when used (PyTorch: "
        "RuntimeError at the use); issue 23: unbind() returns copies",
        lambda p, ref, got: after_op_written(p, {"unbind"}),
        "x = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64, requires_grad=True)\n"
        "y = x * 1\na, b = y.unbind(1)\ny.mul_(5)\nloss = (a * a).sum()\nloss.backward()"),
    "view-before-grad-data": Known(
        "a view taken before its base received grad-requiring data (in-place, or requires_grad_()) "
        "stays requires_grad=False",
        _view_before_grad_data,
        "x = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64)\nv = x.reshape(4)\nx.requires_grad_()"),
    "self-overlap": Known(
        "self-overlapping writes (t[[0, -1]] = t, copy_ from an overlapping view) are accepted; "
        "a[0] = <a view of a> then backward: CopySlices returned an invalid gradient",
        lambda p, ref, got: operand_aliases_target(p, SETITEM_OPS | {"scatter_", "scatter_add_", "index_add_"}),
        "t = torch.tensor([1., 2.], dtype=torch.float64)\nt[torch.tensor([0, -1])] = t.flip(0)[:2]\n"
        "u = torch.tensor([1., 2., 3.], dtype=torch.float64)\nu[1:].copy_(u[:2])"),
    "stale-split-views": Known(
        "a split/chunk view used after its base was written in place",
        lambda p, ref, got: after_op_written(p, {"split", "chunk", "tensor_split"}),
        "x = torch.tensor([1., 2., 3., 4.], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\np, q = a.split(2)\na.mul_(2)\nloss = (p * p).sum()\nloss.backward()"),
    "expand-write": Known(
        "writes into a same-shape expand() view refused or wrong",
        _expand_write,
        "x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\ne = a.expand(2)\ne.mul_(3)\nloss = (a * a).sum()\nloss.backward()"),
    "missing-inplace-methods": Known(
        "unsqueeze_, squeeze_, t_ and index_add_ are missing",
        lambda p, ref, got: any(s.op in ("unsqueeze_", "squeeze_", "t_", "index_add_") for s in p.steps),
        "x = torch.tensor([[1., 2.]], dtype=torch.float64)\nx.t_()"),
    "error-type-setitem-copy": Known(
        "index assignment and copy_ shape mismatches raise ValueError (PyTorch: RuntimeError)",
        _error_type,
        "x = torch.tensor([1., 2.], dtype=torch.float64)\nx[0:2] = torch.tensor([1., 2., 3.], dtype=torch.float64)"),
    "inplace-activations": Known(
        "in-place activations (Hardswish/Mish/SELU inplace=True, pairs of in-place activations) refused",
        _inplace_activations,
        "x = torch.tensor([0.5, -1.2], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\nv = torch.nn.Hardswish(inplace=True)(a)\nloss = (v * v).sum()\nloss.backward()"),
    "addcmul-oversave": Known(
        "addcmul_ saves an operand that needs no grad (backward refuses after it changes); the fuzzer: "
        "addcdiv_ and out-of-place addcmul/addcdiv too (v.addcdiv_(v, c) refuses at backward, PyTorch runs)",
        lambda p, ref, got: any(s.op in ("addcmul_", "addcdiv_", "addcmul", "addcdiv") for s in p.steps),
        "x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)\n"
        "a = x * 1\nt1 = torch.tensor([3., 4.], dtype=torch.float64)\nt2 = torch.tensor([5., 6.], dtype=torch.float64)\n"
        "a.addcmul_(t1, t2)\nt1.mul_(2)\nloss = a.sum()\nloss.backward()"),
    "broadcast-matmul-changed": Known(
        "a broadcast matmul operand changed later makes backward refuse (PyTorch saved a copy)",
        _broadcast_matmul,
        "w = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64, requires_grad=True)\n"
        "b = torch.tensor([[[1., 0.], [0., 1.]], [[2., 1.], [1., 2.]]], dtype=torch.float64)\n"
        "y = w @ b\nb.mul_(2)\nloss = y.sum()\nloss.backward()"),
    "zero-d-dim": Known(
        "0-d tensors with a dim argument (sum/mean/prod/softmax/logsumexp/amax/median/var/flip/movedim/"
        "narrow/select/split/gather/norm/...) and F.gelu on 0-d raise NumPy errors",
        _zero_d,
        "x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)\ny = x.sum(0)\nloss = y * 1\n"
        "loss.backward()"),
    "empty-batch-norm": Known(
        "BatchNorm (NaN running stats) and GroupNorm on an empty batch; found by the fuzzer: GroupNorm in "
        "training with one value per group runs (PyTorch: ValueError, expected more than 1 value per channel)",
        _empty_batch_norm,
        "m = torch.nn.BatchNorm1d(2, dtype=torch.float64)\ny = m(torch.zeros(0, 2, dtype=torch.float64))\n"
        "mean = m.running_mean"),
}


def known_issue(program, ref, got):
    """The name of the KNOWN entry this disagreement falls under, or None."""
    for name, entry in KNOWN.items():
        if entry.matches(program, ref, got):
            return name
    return None
