"""Helpers shared by the layer Functions."""
from ... import autograd
from ..._tensor import Tensor


def constant(array):
    """An array a layer computed in NumPy (or CuPy), as a Tensor that autograd sees as a constant.

    Forwards and NumPy backwards work on raw arrays (``t._data``).  A result
    saved for backward, a mask inside a backward formula, or a gradient
    computed on arrays enters the Tensor world through here: no copy, no
    ``requires_grad``, no ``grad_fn`` (the internal ``Tensor._make``).
    """
    return Tensor._make(array)


def differentiable_backward(forward, inputs, needs_input_grad, grad):
    """The layer's backward as a graph of Tensor ops: what ``create_graph=True`` needs.

    PyTorch can differentiate the backward of a convolution, a pooling or a
    normalization again (double backward: gradient penalties, Hessian-vector
    products).  Our layer backwards are NumPy formulas, fast but invisible to
    autograd.  So when a graph of the backward is wanted (grad mode on inside
    backward), the layer calls this instead:

    1. ``forward(*inputs)`` recomputes the layer's output from differentiable
       Tensor ops (slices, matmul, mean, var, gather...);
    2. ``autograd.grad(out, inputs, grad, create_graph=True)`` differentiates
       that recomputation.  The gradients it returns are built from recorded
       ops, so they can be differentiated again w.r.t. everything they depend
       on: the layer's inputs *and* the incoming ``grad``.

    Each input that needs a gradient enters through an alias (``view_as``):
    ``autograd.grad`` stops at the alias, so it differentiates this layer only,
    while the recorded gradient stays connected to the real input.

    Returns one gradient per input (``None`` where ``needs_input_grad`` is False).
    """
    aliases = [t.view_as(t) if need else t for t, need in zip(inputs, needs_input_grad)]
    wanted = [a for a, need in zip(aliases, needs_input_grad) if need]
    out = forward(*aliases)
    grads = iter(autograd.grad(out, wanted, grad, create_graph=True, allow_unused=True))
    return tuple(next(grads) if need else None for need in needs_input_grad)
