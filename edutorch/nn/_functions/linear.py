"""``F.linear`` and ``F.bilinear``: affine maps, fused into one op each.

PyTorch computes ``F.linear(x, W, b)`` for a 2-D ``x`` as ONE call,
``addmm(b, x, W.t())`` = ``b + x @ W.t()``, whose graph node is
``AddmmBackward0`` (``MmBackward0`` without a bias).  We do the same in one
Function: one matmul and one in-place broadcast add in NumPy, and one graph
node whose edges go to (bias, input, weight).  Backward is three Tensor ops
(``grad.sum(0)``, ``grad @ W``, ``grad.t() @ x``), so with ``create_graph=True``
they are differentiated again.
"""
from ... import _dtype
from ...autograd.function import Function
from ...autograd._saved_attrs import Saved, layout, sym_sizes, sym_strides
from ...autograd._functions.blas import _shape_str
from ...autograd._functions.utils import REDUCED_FLOATS, accumulation_input, matmul, rounded_to


def _check(x, w, input, weight, bias=None):
    """PyTorch's errors for operands that cannot be multiplied (called only when they cannot).

    With a bias (``addmm(bias, x, W.t())``) PyTorch compares the bias with W first
    ("self and mat2"), then x with W; without one, ``mm`` has its own message.
    """
    if x.shape[1] != w.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(x.shape)} and {_shape_str(w.shape[::-1])})"
        )
    name = _dtype.scalar_type_name
    if bias is not None and bias.dtype != weight.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {name(bias.dtype)} and {name(weight.dtype)}"
        )
    if bias is None and x.dtype != w.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_dtype.cpp_type_name(input.dtype)} != {_dtype.cpp_type_name(weight.dtype)}"
        )
    if x.dtype != w.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {name(input.dtype)} and {name(weight.dtype)}"
        )


class Addmm(Function):
    """``bias + input @ weight.T`` for a 2-D input: the op behind ``nn.Linear``."""

    _backward_name = "AddmmBackward0"
    # grad_fn._saved_<name> (autograd/_saved_attrs.py).  PyTorch's node saves mat2 = weight.t();
    # this one keeps the weight itself, so it has no _saved_mat2 (README, known differences)
    _saved_attrs = {
        "alpha": lambda ctx: 1, "beta": lambda ctx: 1, "mat1": Saved(0),
        "mat1_sym_sizes": lambda ctx: sym_sizes(ctx.input_layout),
        "mat1_sym_strides": lambda ctx: sym_strides(ctx.input_layout) if ctx.needs_input_grad[1] else (),
    }

    @staticmethod
    def forward(ctx, bias, input, weight):
        x, w = input._data, weight._data
        if x.shape[1] != w.shape[1] or x.dtype != w.dtype or bias is not None and bias._data.dtype != w.dtype:
            _check(x, w, input, weight, bias)
        # save only what backward will read: x for dW, W for dx
        ctx.save_for_backward(input if ctx.needs_input_grad[2] else None,
                              weight if ctx.needs_input_grad[1] else None)
        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:  # a graph node: keep the input's layout
            ctx.input_layout = layout(x)
        if bias is not None and x.dtype in REDUCED_FLOATS:
            # float16/bfloat16: PyTorch's CPU addmm adds the bias to the float32 product and rounds once
            wide = accumulation_input(x) @ accumulation_input(w).T
            wide += accumulation_input(bias._data)
            return rounded_to(wide, x.dtype)
        out = matmul(x, w.T)  # W.T is a view: BLAS reads the transpose, nothing is copied
        if bias is not None:
            out += bias._data  # in place, broadcast over the batch: no second (N, out) array
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        need_bias, need_input, need_weight = ctx.needs_input_grad  # one flag per input
        g_bias = grad.sum(0) if need_bias else None  # the bias was broadcast over the batch
        g_input = grad @ weight if need_input else None  # (N, out) @ (out, in)
        g_weight = grad.t() @ input if need_weight else None  # (out, N) @ (N, in)
        return g_bias, g_input, g_weight


class LinearNoBias(Addmm):
    """``input @ weight.T`` (``nn.Linear(bias=False)``): ``Addmm`` called with ``bias=None``.

    PyTorch computes it with ``mm``, so the node is an ``MmBackward0``; its
    edges go to (input, weight) only, since ``None`` is not a tensor.
    """

    _backward_name = "MmBackward0"
    # PyTorch's mm(input, weight.t()): the same table under mm's names, no _saved_mat2 either
    _saved_attrs = {
        "self": Saved(0), "self_sym_sizes": lambda ctx: sym_sizes(ctx.input_layout),
        "self_sym_strides": lambda ctx: sym_strides(ctx.input_layout) if ctx.needs_input_grad[1] else (),
    }


class Bilinear(Function):
    """``y[n, o] = x1[n, i] W[o, i, j] x2[n, j] + b[o]`` (``torch.bilinear``)."""

    _backward_name = "BilinearBackward0"

    @staticmethod
    def forward(ctx, x1, x2, weight, bias):
        import numpy as np

        ctx.save_for_backward(x1, x2, weight)
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
