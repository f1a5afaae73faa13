"""``F.linear`` and ``F.bilinear``: affine maps, fused into one op each.

PyTorch computes ``F.linear(x, W, b)`` for a 2-D ``x`` as ONE call,
``addmm(b, x, W.t())`` = ``b + x @ W.t()``; its graph shows
``AddmmBackward0`` with the transpose of ``W`` as a ``TBackward0`` input.
We do the same: one matmul and one broadcast add in NumPy.
"""
from ...autograd.function import Function
from ...autograd._functions.blas import _shape_str


class Addmm(Function):
    """``bias + mat1 @ mat2`` (``torch.addmm``), the op behind ``nn.Linear``."""

    _backward_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, bias, mat1, mat2):
        x, w = mat1.data, mat2.data
        if x.shape[1] != w.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(x.shape)} and {_shape_str(w.shape)})"
            )
        if x.dtype != w.dtype:
            raise RuntimeError(
                f"mat1 and mat2 must have the same dtype, but got {mat1.dtype.name.capitalize()} "
                f"and {mat2.dtype.name.capitalize()}"
            )
        # save only what backward will read: x for dW, W for dx
        ctx.save_for_backward(mat1 if ctx.needs_input_grad[2] else None,
                              mat2 if ctx.needs_input_grad[1] else None)
        ctx.bias_shape = bias.data.shape
        out = x @ w
        out += bias.data  # in place: no second (N, out) temporary
        return out

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = ctx.saved_tensors
        # the bias was broadcast over the batch: its gradient sums over it
        g_bias = grad.sum_to_size(ctx.bias_shape) if ctx.needs_input_grad[0] else None
        g_mat1 = grad.mm(mat2.t()) if ctx.needs_input_grad[1] else None
        g_mat2 = mat1.t().mm(grad) if ctx.needs_input_grad[2] else None
        return g_bias, g_mat1, g_mat2


class Bilinear(Function):
    """``y[n, o] = x1[n, i] W[o, i, j] x2[n, j] + b[o]`` (``torch.bilinear``)."""

    _backward_name = "BilinearBackward0"

    @staticmethod
    def forward(ctx, x1, x2, weight, bias):
        import numpy as np

        ctx.save_for_backward(x1, x2, weight)
        # einsum spells the double contraction exactly as the formula reads
        out = np.einsum("ni,oij,nj->no", x1.data, weight.data, x2.data, optimize=True)
        if bias is not None:
            out += bias.data
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
