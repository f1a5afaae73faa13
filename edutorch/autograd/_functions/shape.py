"""Shape ops: view/reshape, transpose/permute, expand.  Gradients undo the move.

NumPy returns views for these where it can, as PyTorch does, so a view shares
memory (and, in edutorch, the version counter) with its base.
"""
from ..function import Function


def _infer_shape(shape, numel, in_shape):
    """Resolve one ``-1`` in ``shape``; PyTorch's error if the sizes do not fit."""
    shape = tuple(int(s) for s in shape)
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class View(Function):
    _backward_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        from ..._tensor import Tensor

        x = a.data
        ctx.in_shape = x.shape
        new = x.reshape(_infer_shape(shape, x.size, x.shape))
        if new.size and new.base is None and x.size:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        # a view shares the base's version counter: in-place on one is seen on both
        return Tensor._make(new, False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


class Reshape(View):
    """``reshape``: a view when possible, else a copy (``ReshapeAliasBackward0``/``ViewBackward0``)."""

    _backward_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        x = a.data
        ctx.in_shape = x.shape
        return x.reshape(_infer_shape(shape, x.size, x.shape))


class Permute(Function):
    _backward_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        from ..._tensor import Tensor, _wrap_dim

        dims = tuple(_wrap_dim(d, a.data.ndim) for d in dims)
        if sorted(dims) != list(range(a.data.ndim)):
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                f"length of the desired ordering of dimensions i.e. input.dim() = {a.data.ndim} is "
                f"not equal to len(dims) = {len(dims)}"
                if len(dims) != a.data.ndim else "permute(): duplicate dims are not allowed."
            )
        ctx.dims = dims
        return Tensor._make(a.data.transpose(dims), False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return grad.permute(inverse), None


class Transpose(Function):
    _backward_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        from ..._tensor import Tensor, _wrap_dim

        n = a.data.ndim
        ctx.dims = (_wrap_dim(dim0, n), _wrap_dim(dim1, n))
        out = a.data.swapaxes(*ctx.dims) if n > 1 else a.data
        return Tensor._make(out, False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class Expand(Function):
    _backward_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        import numpy as np

        from ..._tensor import Tensor

        x = a.data
        ctx.in_shape = x.shape
        lead = len(shape) - x.ndim
        if lead < 0:
            raise RuntimeError(
                f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={list(shape)}): the number of "
                "sizes provided "
                f"({len(shape)}) must be greater or equal to the number of dimensions in the tensor ({x.ndim})"
            )
        target = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        for i, s in enumerate(x.shape):
            if s != 1 and s != target[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[lead + i]}) must match the existing "
                    f"size ({s}) at non-singleton dimension {lead + i}.  Target sizes: "
                    f"{list(shape)}.  Tensor sizes: {list(x.shape)}"
                )
        xp = np if type(x) is np.ndarray else __import__("cupy")
        return Tensor._make(xp.broadcast_to(x, target), False, None, 0, a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.in_shape), None
