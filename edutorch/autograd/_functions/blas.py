"""Matrix products: ``mm``, ``matmul``/``@``.  d(A@B)/dA = G @ Bᵀ, d/dB = Aᵀ @ G."""
from ..function import Function


def _shape_str(shape):
    return "x".join(str(s) for s in shape)


class Mm(Function):
    """2-D matrix product (``torch.mm``)."""

    _backward_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a.data, b.data
        if x.ndim != 2 or y.ndim != 2:
            raise RuntimeError(f"{'self' if x.ndim != 2 else 'mat2'} must be a matrix")
        if x.shape[1] != y.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(x.shape)} and {_shape_str(y.shape)})"
            )
        if x.dtype != y.dtype:
            raise RuntimeError(
                f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
            )
        ctx.save_for_backward(a, b)
        return x @ y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad.mm(b.t()) if ctx.needs_input_grad[0] else None
        gb = a.t().mm(grad) if ctx.needs_input_grad[1] else None
        return ga, gb


class Matmul(Function):
    """``torch.matmul``: 1-D, 2-D and batched products with broadcasting of batch dims."""

    _backward_name = "MatmulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a.data, b.data
        if x.ndim == 0 or y.ndim == 0:
            raise RuntimeError(
                f"both arguments to matmul need to be at least 1D, but they are {x.ndim}D and {y.ndim}D"
            )
        if x.dtype != y.dtype:
            raise RuntimeError(
                f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
            )
        k1 = x.shape[-1]
        k2 = y.shape[-2] if y.ndim > 1 else y.shape[0]
        if k1 != k2:
            if x.ndim == 1 and y.ndim == 1:
                raise RuntimeError(
                    "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
                    "number of elements, but got %d and %d elements respectively" % (k1, k2, k1, k2)
                )
            left = x.reshape(-1, k1).shape if x.ndim > 1 else (1, k1)
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(left)} and "
                f"{_shape_str(y.shape[-2:] if y.ndim > 1 else (k2, 1))})"
            )
        ctx.save_for_backward(a, b)
        return x @ y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # Promote 1-D operands to matrices so one formula covers every case.
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g = grad
        if a.ndim == 1:
            g = g.unsqueeze(-2)
        if b.ndim == 1:
            g = g.unsqueeze(-1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g.matmul(b2.transpose(-1, -2)).sum_to_size(a2.shape)
            ga = ga.reshape(a.shape)
        if ctx.needs_input_grad[1]:
            gb = a2.transpose(-1, -2).matmul(g).sum_to_size(b2.shape)
            gb = gb.reshape(b.shape)
        return ga, gb
