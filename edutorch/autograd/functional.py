"""``torch.autograd.functional``: Jacobians, Hessians and their products, as functions.

Each function takes a Python ``func`` and the point ``inputs`` at which to
differentiate it, and is built from ``autograd.grad`` alone:

* ``vjp(func, x, v)``  = vᵀ·J        one backward pass;
* ``jvp(func, x, v)``  = J·v         the *double-backward trick*: differentiate
  the vjp ``u ↦ uᵀJ`` (linear in ``u``) with respect to ``u``;
* ``jacobian``         = J           one vjp per output element (a row each);
* ``hessian``          = the jacobian of the gradient (``create_graph=True`` inside);
* ``vhp`` / ``hvp``    = vᵀ·H / H·v  backward through the gradient (H is symmetric
  for smooth functions, so both give the same numbers).

``inputs`` and the outputs of ``func`` may each be a Tensor or a tuple of
Tensors; results come back in the same form (a tuple of tuples for a Jacobian
of several outputs w.r.t. several inputs). ``create_graph=True`` keeps the
results differentiable; ``strict=True`` raises where an output does not depend
on an input instead of returning zeros. The helpers and error messages follow
PyTorch's ``torch/autograd/functional.py`` step by step.
"""
import numpy as np

from . import forward_ad
from . import grad as _autograd_grad_fn
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tensor_class():
    """``edutorch.Tensor`` (set on ``function`` once ``_tensor.py`` has run)."""
    from .function import _Tensor

    return _Tensor


# -- tuple in, tuple out ---------------------------------------------------------
def _as_tuple(inp, arg_name, fn_name):
    """``(was_a_tuple, tuple_of_tensors)``; anything but Tensors is PyTorch's TypeError."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, _tensor_class()):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the {where} has type {type(el)}."
            )
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Unwrap the one-element tuples the user did not pass as tuples.

    ``to_unpack`` is a bool (one level) or ``(outer, inner)`` for a Jacobian's
    tuple of tuples."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh graph roots for the inputs: detached copies, or (``create_graph`` and an
    input that requires grad) a view, so gradients still flow back to the user's tensor."""
    return tuple(
        inp.view_as(inp) if create_graph and inp.requires_grad
        else inp.detach().requires_grad_(need_graph)
        for inp in inputs
    )


def _grad_postprocess(inputs, create_graph):
    """Detach the results unless the user asked for a differentiable answer."""
    if isinstance(inputs[0], _tensor_class()):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    """``v`` must have one tensor per ``other`` tensor, of the same size."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


_STRICT_NO_GRAD = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent "
               "of the input. This is not allowed in strict mode. You should ensure that your "
               "function is thrice differentiable and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function "
                "with respect to input {i} is independent of the input. This is not allowed in "
                "strict mode. You should ensure that your function is twice differentiable and "
                "that the jacobian depends on the inputs (this would be violated by a linear "
                "function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs "
               "must be computed in a differentiable manner from the input when running in "
               "strict mode.",
}


def _check_requires_grad(inputs, input_type, strict):
    """In strict mode, every tensor of ``inputs`` must exist and be part of a graph."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if not inp.requires_grad:
            raise RuntimeError(_STRICT_NO_GRAD[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` that skips outputs outside any graph and gives None for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    new_outputs, new_grad_outputs = zip(*kept)
    return _autograd_grad_fn(new_outputs, inputs, new_grad_outputs, allow_unused=True,
                             create_graph=create_graph, retain_graph=retain_graph,
                             is_grads_batched=is_grads_batched)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replace each None gradient by zeros shaped like ``refs[i]`` (or raise in strict mode)."""
    from .._creation import zeros_like

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _prepare_v(v, refs, is_refs_tuple, create_graph, fn_name, none_message):
    """Check ``v`` against ``refs`` (inputs or outputs); ``v=None`` only for one element."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
        return v
    if len(refs) != 1 or refs[0].nelement() != 1:
        raise RuntimeError(none_message)
    return None


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
                  "Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                 "single Tensor with a single element.")


# -- products ----------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``torch.autograd.functional.vjp``: ``(func(inputs), vᵀ·J)``, shaped like the inputs."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp", _V_NONE_OUTPUT)

    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")

    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``torch.autograd.functional.jvp``: ``(func(inputs), J·v)``, shaped like the outputs.

    The double-backward trick: ``g(u) = uᵀJ`` is linear in a dummy ``u``, and the
    gradient of ``g(u)·v`` with respect to ``u`` is ``J·v``."""
    from .._creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        dummy = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, dummy, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)

    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, dummy, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")

    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def _scalar_output(func, inputs, fn_name, strict):
    """Call ``func``; vhp/hvp/hessian need one Tensor with one element."""
    out = func(*inputs)
    is_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single element"
        )
    return outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``torch.autograd.functional.vhp``: ``(func(inputs), vᵀ·H)`` for a scalar ``func``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_NONE_INPUT)
        outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)

    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")

    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``torch.autograd.functional.hvp``: ``(func(inputs), H·v)`` for a scalar ``func``.

    The double-backward trick once more, on the gradient: ``u ↦ uᵀH`` is linear in
    a dummy ``u`` and its gradient against ``v`` is ``H·v``."""
    from .._creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_NONE_INPUT)
        outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        dummy = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, dummy, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)  # PyTorch checks ``jac`` here too

    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, dummy, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")

    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(result, is_inputs_tuple)


# -- full matrices ---------------------------------------------------------------------
def _basis(tensors):
    """One identity matrix cut in column blocks, one ``(total, numel_i)`` block per tensor:
    row ``k`` of the blocks together is the k-th standard basis vector of all tensors."""
    from .._creation import zeros

    numels = [t.numel() for t in tensors]
    total = sum(numels)
    blocks, start = [], 0
    for t, n in zip(tensors, numels):
        block = zeros(total, n, dtype=t.dtype, device=t.device)
        block._data[start + np.arange(n), np.arange(n)] = 1
        blocks.append(block)
        start += n
    return tuple(blocks), numels


def _jacobian_vectorized(outputs, inputs, create_graph):
    """All rows of the Jacobian at once: ``autograd.grad(is_grads_batched=True)`` with
    the identity as the batch of grad_outputs (PyTorch vmaps this; same numbers)."""
    from .._creation import zeros_like

    grad_outputs, numels = _basis(outputs)
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    vj = _autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph,
                        is_grads_batched=True)
    per_input = []
    for g, inp in zip(vj, inputs):
        if g is None:
            g = zeros_like(inp).expand((sum(numels),) + tuple(inp.shape))
        per_input.append([
            jac.reshape(tuple(out.shape) + tuple(inp.shape))
            for jac, out in zip(g.split(numels, dim=0), outputs)
        ])
    return tuple(zip(*per_input))  # [output][input]


def _jacobian_rows(outputs, inputs, create_graph, strict):
    """The Jacobian row by row: one vjp per element of each output."""
    from .._creation import zeros_like
    from .._functional import stack

    jacobian = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (g, inp) in enumerate(zip(vj, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of input "
                            f"{k}. This is not allowed in strict mode."
                        )
                    g = zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        f"The jacobian of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode when create_graph=True."
                    )
                rows[k].append(g)
        jacobian.append(tuple(
            stack(r, dim=0).view(tuple(out.size()) + tuple(inp.size()))
            for r, inp in zip(rows, inputs)
        ))
    return tuple(jacobian)


def _dual_jvp(func, inputs, v):
    """``(outputs, J v)`` by dual numbers (``torch.autograd.forward_ad``), as PyTorch's forward-mode
    ``jacobian`` computes each column; an output without tangent gets zeros."""
    from .._creation import zeros_like

    with forward_ad.dual_level():
        out = func(*[forward_ad.make_dual(inp, t) for inp, t in zip(inputs, v)])
        is_tuple, outputs = _as_tuple(out, "outputs", "jacobian")
        pairs = [forward_ad.unpack_dual(o) for o in outputs]
    primals = tuple(p for p, _ in pairs)
    tangents = tuple(zeros_like(p) if t is None else t for p, t in pairs)
    return (primals if is_tuple else primals[0]), (tangents if is_tuple else tangents[0])


def _jacobian_forward(func, inputs, vectorize, differentiable):
    """``strategy="forward-mode"``: the Jacobian column by column, one jvp per input
    element, by dual numbers (inside an open dual level, where forward_ad allows no
    second one, by the double-backward trick).

    PyTorch's dual tensors keep their primal's graph, so the result stays
    differentiable when an input requires grad (and, in a forward-over-reverse
    Hessian, always): ``differentiable`` says so."""
    from .._functional import stack

    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    tangents, numels = _basis(inputs)
    columns, is_outputs_tuple, outputs = [], None, None
    for k in range(sum(numels)):
        v = tuple(t[k].view_as(inp) for t, inp in zip(tangents, inputs))
        if forward_ad._state.level is None:
            out, jv = _dual_jvp(func, inputs, v)
        else:
            out, jv = jvp(func, inputs, v, create_graph=differentiable)
        is_outputs_tuple, outputs = isinstance(out, tuple), _as_tuple(out, "outputs", "jacobian")[1]
        columns.append(jv if is_outputs_tuple else (jv,))
    result = []
    for i, out in enumerate(outputs):
        cols = stack([c[i] for c in columns], dim=-1)  # (*out.shape, total)
        result.append([
            block.reshape(tuple(out.shape) + tuple(inp.shape))
            for block, inp in zip(cols.split(numels, dim=-1), inputs)
        ])
    # lists, not tuples, as PyTorch's forward-mode path returns them
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """``torch.autograd.functional.jacobian``: ``J[i][j]`` of shape
    ``outputs[i].shape + inputs[j].shape`` (a plain Tensor for one input and one output)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.'
            )
        _, tensors = _as_tuple(inputs, "inputs", "jacobian")
        return _jacobian_forward(func, inputs, vectorize, any(t.requires_grad for t in tensors))

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                    "not supported together. Please either set `strict=False` or `vectorize=False`."
                )
            jac = _jacobian_vectorized(outputs, inputs, create_graph)
        else:
            jac = _jacobian_rows(outputs, inputs, create_graph, strict)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """``torch.autograd.functional.hessian``: the Jacobian of the gradient of a scalar
    ``func``; ``H[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        return _scalar_output(func, inp, "hessian", strict)[0].squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    if outer_jacobian_strategy == "forward-mode" and not (create_graph or strict):
        # the inner reverse pass records a graph, which the forward pass keeps
        res = _jacobian_forward(gradient, inputs, vectorize, differentiable=True)
    else:
        res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                       vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))
