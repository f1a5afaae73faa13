"""``F.linear`` and ``F.bilinear``: affine maps, fused into one op each.

PyTorch computes ``F.linear(x, W, b)`` for a 2-D ``x`` as ONE call,
``addmm(b, x, W.t())`` = ``b + x @ W.t()``, whose graph node is
``AddmmBackward0`` (``MmBackward0`` without a bias).  :class:`Linear` is
that ``Addmm`` (``autograd/_functions/blas.py``: the forward ``addmm_array``,
the gradients ``mm_mat1_backward``/``mm_mat2_backward``) with ``mat2 = W.t()``
folded in: its edges go to (bias, input, weight) itself, where PyTorch's third
edge goes through a ``TBackward0`` node (README, known differences).  Its
backward calls the two helpers with ``transposed=True``: they take ``W`` for
``mat2ᵀ`` and give ``W``'s gradient (``grad @ W`` and ``grad.t() @ x``), where
calling them on a ``W.t()`` view would add view ops to every layer's backward
(measured at +30% for a small layer's step).  Backward is Tensor ops, so with
``create_graph=True`` they are differentiated again.
"""
import numpy as np

from ...autograd.function import Function
from ...autograd._saved_attrs import Saved, layout, sym_sizes, sym_strides
from ...autograd._functions.blas import (Addmm, addmm_array, check_addmm, check_mm, mm_jvp, mm_mat1_backward,
                                         mm_mat2_backward)
from ...autograd._functions.tangents import sum_tangents


def _weight_gradient_transposed(grad_inputs):
    """(…, grad of W) <-> (…, grad of W.t()): the last input of PyTorch's ``addmm``/``mm`` is ``W.t()``."""
    *others, g_weight = grad_inputs
    return (*others, None if g_weight is None else g_weight.t())


class Linear(Addmm):
    """``bias + input @ weight.T`` for a 2-D input: the op behind ``nn.Linear``."""

    _backward_name = "AddmmBackward0"
    _profiler_name = "aten::linear"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "linear"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # the node's hooks (and the legacy Module.register_backward_hook) see PyTorch's grad_input (engine.py)
    _hooked_grad_inputs = staticmethod(_weight_gradient_transposed)
    # grad_fn._saved_<name> (autograd/_saved_attrs.py).  PyTorch's node saves mat2 = weight.t();
    # this one keeps the weight itself, so it has no _saved_mat2 (README, known differences)
    _saved_attrs = {
        "alpha": lambda ctx: 1, "beta": lambda ctx: 1, "mat1": Saved(0),
        "mat1_sym_sizes": lambda ctx: sym_sizes(ctx.input_layout),
        "mat1_sym_strides": lambda ctx: sym_strides(ctx.input_layout) if ctx.needs_input_grad[1] else (),
    }

    @staticmethod
    def forward(ctx, bias, input, weight):
        x, w_t = input._data, weight._data.T  # W.T is a view: BLAS reads the transpose, nothing is copied
        b = None if bias is None else bias._data
        if x.shape[1] != w_t.shape[0] or x.dtype != w_t.dtype or b is not None and b.dtype != w_t.dtype:
            check_addmm(b, x, w_t) if b is not None else check_mm(input, weight.mT)  # PyTorch's errors
        # save only what backward will read: x for dW, W for dx.  PyTorch saves the view W.t(), made now: a W
        # that does not require grad yet stays so in a second-order graph (a detached alias does the same)
        if ctx.needs_input_grad[1] and not weight._requires_grad:
            weight = weight.detach()
        ctx.save_for_backward(input if ctx.needs_input_grad[2] else None,
                              weight if ctx.needs_input_grad[1] else None)
        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:  # a graph node: keep the input's layout
            ctx.input_layout = layout(x)
        return addmm_array(b, x, w_t)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        need_bias, need_input, need_weight = ctx.needs_input_grad  # one flag per input
        g_bias = grad.sum(0) if need_bias else None  # the bias was broadcast over the batch
        # Addmm's gradients with mat2 = Wᵀ: the helpers take W for mat2ᵀ and give W's gradient
        g_input = mm_mat1_backward(grad, weight, transposed=True) if need_input else None  # grad W
        g_weight = mm_mat2_backward(grad, input, transposed=True) if need_weight else None  # gradᵀ x
        return g_bias, g_input, g_weight

    @staticmethod
    def jvp(ctx, d_bias, d_input, d_weight):
        """Addmm's tangent with mat2 = Wᵀ: d_bias + dx Wᵀ + x dWᵀ."""
        _, input, weight = ctx.primals
        product = mm_jvp(input, d_input, weight.t(), None if d_weight is None else d_weight.t())
        return sum_tangents(d_bias, product)


class LinearNoBias(Linear):
    """``input @ weight.T`` (``nn.Linear(bias=False)``): ``Linear`` called with ``bias=None``.

    PyTorch computes it with ``mm``, so the node is an ``MmBackward0``; its
    edges go to (input, weight) only, since ``None`` is not a tensor.
    """

    _backward_name = "MmBackward0"
    _profiler_name = "aten::linear"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "linear"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # PyTorch's mm(input, weight.t()): the same table under mm's names, no _saved_mat2 either
    _saved_attrs = {
        "self": Saved(0), "self_sym_sizes": lambda ctx: sym_sizes(ctx.input_layout),
        "self_sym_strides": lambda ctx: sym_strides(ctx.input_layout) if ctx.needs_input_grad[1] else (),
    }


class Bilinear(Function):
    """``y[n, o] = x1[n, i] W[o, i, j] x2[n, j] + b[o]`` (``torch.bilinear``)."""

    _backward_name = "BilinearBackward0"
    _autocast_op = "bilinear"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, x1, x2, weight, bias):
        # each factor is kept only for the others' gradients, as PyTorch's _trilinear node keeps them
        needs = ctx.needs_input_grad
        ctx.save_for_backward(x1 if needs[1] or needs[2] else None, x2 if needs[0] or needs[2] else None,
                              weight if needs[0] or needs[1] else None)
        # einsum spells the double contraction exactly as the formula reads
        out = np.einsum("ni,oij,nj->no", x1._data, weight._data, x2._data, optimize=True)
        if bias is not None:
            out += bias._data
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, weight = ctx.saved_tensors
        g1 = g2 = gw = gb = None
        if ctx.needs_input_grad[0]:   # dL/dx1[n,i] = sum_o,j g[n,o] W[o,i,j] x2[n,j]
            g1 = (grad.unsqueeze(2).unsqueeze(3) * weight.unsqueeze(0) * x2.unsqueeze(1).unsqueeze(2)).sum((1, 3))
        if ctx.needs_input_grad[1]:
            g2 = (grad.unsqueeze(2).unsqueeze(3) * weight.unsqueeze(0) * x1.unsqueeze(1).unsqueeze(3)).sum((1, 2))
        if ctx.needs_input_grad[2]:
            gw = (grad.unsqueeze(2).unsqueeze(3) * x1.unsqueeze(1).unsqueeze(3) * x2.unsqueeze(1).unsqueeze(2)).sum(0)
        if ctx.needs_input_grad[3]:
            gb = grad.sum(0)
        return g1, g2, gw, gb

    @staticmethod
    def jvp(ctx, d1, d2, dw, db):
        """Linear in each of x1, x2, W (the product rule, one term each), plus the bias's tangent."""
        x1, x2, weight, _ = ctx.primals
        return sum_tangents(Bilinear.apply(d1, x2, weight, None) if d1 is not None else None,
                            Bilinear.apply(x1, d2, weight, None) if d2 is not None else None,
                            Bilinear.apply(x1, x2, dw, None) if dw is not None else None, db)
