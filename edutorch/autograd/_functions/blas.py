"""Matrix products: ``mm``, ``bmm``, ``matmul``/``@``, ``addmm``.

d(A@B)/dA = G @ Bᵀ and d(A@B)/dB = Aᵀ @ G: written once, in
:func:`mm_mat1_backward` and :func:`mm_mat2_backward` (the helpers of
PyTorch's ``derivatives.yaml``), which every product's backward calls.
``matmul`` also handles vectors (treated as a row or a column, then squeezed)
and batches (leading dims broadcast like element-wise ops, so their gradient
is summed back).
"""
import numpy as np

from ... import _dtype, backend
from .. import grad_mode
from ..function import Function
from .._saved_attrs import Saved, layout, sym_sizes, sym_strides
from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle
from .shape import View, can_view
from .tangents import auto_linear, sum_tangents
from .utils import REDUCED_FLOATS, accumulation_input, refuse_bool, rounded_to
from .utils import _device_error


# -- the gradient of a matrix product, once --------------------------------------------------
def mm_mat1_backward(grad, mat2, alpha=1, *, transposed=False):
    """The gradient of ``mat1`` in ``alpha * mat1 @ mat2``: ``alpha * grad @ mat2ᵀ`` (dA = G Bᵀ).

    PyTorch's ``mm_mat1_backward``; also the batched case (``bmm``, ``matmul``),
    where ``mat2ᵀ`` transposes the last two dims of every matrix in the batch.
    ``transposed=True``: the caller holds ``mat2`` as its transpose and passes
    that (``F.linear`` keeps ``W``, its ``mat2`` being ``Wᵀ``), so ``mat2ᵀ`` is
    the argument itself and no transpose op is made.
    """
    mat2_t = mat2 if transposed else _transpose(mat2)
    return _scaled(_product(grad, mat2_t), alpha)


def mm_mat2_backward(grad, mat1, alpha=1, *, transposed=False):
    """The gradient of ``mat2`` in ``alpha * mat1 @ mat2``: ``alpha * mat1ᵀ @ grad`` (dB = Aᵀ G).

    PyTorch's ``mm_mat2_backward``.  ``transposed=True``: the caller holds
    ``mat2`` as its transpose (``F.linear``'s ``W``, with ``mat2 = Wᵀ``) and wants
    the gradient of that, the transpose of dB: (Aᵀ G)ᵀ = Gᵀ A.
    """
    product = _product(_transpose(grad), mat1) if transposed else _product(_transpose(mat1), grad)
    return _scaled(product, alpha)


def _transpose(m):
    """``mᵀ`` as PyTorch's formulas write it: ``m.t()`` for a matrix (``TBackward0`` under
    ``create_graph``), the last two dims swapped for a batch (``TransposeBackward0``)."""
    return m.t() if m.ndim == 2 else m.mT


def mm_jvp(mat1, mat1_t, mat2, mat2_t, alpha=1):
    """The tangent of ``alpha * mat1 @ mat2`` (forward mode): ``alpha * (dA @ B + A @ dB)``,
    the product rule; a missing tangent (``None``) drops its term.  Batched too."""
    left = _product(mat1_t, mat2) if mat1_t is not None else None
    right = _product(mat1, mat2_t) if mat2_t is not None else None
    return _scaled(sum_tangents(left, right), alpha)


def _product(a, b):
    """``a @ b`` as PyTorch's formulas call it: ``bmm`` for two equal batches of matrices
    (so that ``create_graph=True`` records ``BmmBackward0``), else ``matmul`` (which
    broadcasts the batch dims)."""
    return a.bmm(b) if a.ndim == 3 and b.ndim == 3 and a.shape[0] == b.shape[0] else a @ b


def _scaled(t, alpha):
    return t if alpha == 1 else t * alpha


def _shape_str(shape):
    return "x".join(str(s) for s in shape)


def _check_dtypes(a, b):
    if type(a._data) is not type(b._data):
        raise RuntimeError(_device_error(a._data, b._data))
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_dtype.cpp_type_name(a.dtype)} != {_dtype.cpp_type_name(b.dtype)}"
        )


def check_mm(a, b):
    """PyTorch's errors for ``mm(a, b)``, in its order."""
    x, y = a._data, b._data
    if x.ndim != 2 or y.ndim != 2:
        raise RuntimeError(f"{'self' if x.ndim != 2 else 'mat2'} must be a matrix")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(x.shape)} and {_shape_str(y.shape)})"
        )
    _check_dtypes(a, b)


class Mm(Function):
    """2-D matrix product (``torch.mm``)."""

    _backward_name = "MmBackward0"
    _autocast_op = "mm"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # grad_fn._saved_<name> (_saved_attrs.py); as in PyTorch, a stride is kept only where
    # the operand needs a gradient (it shapes that gradient), else it reads ()
    _saved_attrs = {
        "self": Saved(0), "mat2": Saved(1),
        "self_sym_sizes": lambda ctx: sym_sizes(ctx.layouts[0]), "mat2_sym_sizes": lambda ctx: sym_sizes(ctx.layouts[1]),
        "self_sym_strides": lambda ctx: sym_strides(ctx.layouts[0]) if ctx.needs_input_grad[0] else (),
        "mat2_sym_strides": lambda ctx: sym_strides(ctx.layouts[1]) if ctx.needs_input_grad[1] else (),
    }

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0] or x.dtype != y.dtype or type(x) is not type(y):
            check_mm(a, b)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[0] else None)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:  # a graph node: keep the operands' layout
            ctx.layouts = (layout(x), layout(y))
        return _utils.matmul(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = mm_mat1_backward(grad, b) if ctx.needs_input_grad[0] else None  # dA = G Bᵀ
        gb = mm_mat2_backward(grad, a) if ctx.needs_input_grad[1] else None  # dB = Aᵀ G
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        return mm_jvp(a, da, b, db)  # dA B + A dB


class Bmm(Function):
    """Batched matrix product of two 3-D tensors (``torch.bmm``), no broadcasting."""

    _backward_name = "BmmBackward0"
    _autocast_op = "bmm"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0), "mat2": Saved(1)}  # grad_fn._saved_self, ... (_saved_attrs.py)

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim != 3 or y.ndim != 3:
            raise RuntimeError(f"batch{1 if x.ndim != 3 else 2} must be a 3D tensor")
        if y.shape[:2] != (x.shape[0], x.shape[2]):
            raise RuntimeError(
                "Expected size for first two dimensions of batch2 tensor to be: "
                f"[{x.shape[0]}, {x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}]."
            )
        _check_dtypes(a, b)
        # each operand is needed only for the other's gradient (PyTorch saves the same)
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[0] else None)
        return _utils.matmul(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = mm_mat1_backward(grad, b) if ctx.needs_input_grad[0] else None  # each matrix: G Bᵀ
        gb = mm_mat2_backward(grad, a) if ctx.needs_input_grad[1] else None  # each matrix: Aᵀ G
        return ga, gb

    jvp = Mm.jvp  # each matrix: dA B + A dB


def _check_matmul(a, b):
    """PyTorch's error for each way ``matmul`` operands can disagree."""
    x, y = a._data, b._data
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {x.ndim}D and {y.ndim}D"
        )
    k1 = x.shape[-1]
    k2 = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if x.ndim == 1 and y.ndim == 1:
        if k1 != k2:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{k1}] and src [{k2}] to have the same "
                f"number of elements, but got {k1} and {k2} elements respectively"
            )
    elif y.ndim == 1:
        if k1 != k2:
            rows = int(np.prod(x.shape[:-1]))
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k1}), vec ({k2})")
    elif x.ndim <= 2 and y.ndim == 2 or (x.ndim > 2 and y.ndim == 2):
        if k1 != k2:
            left = (int(np.prod(x.shape[:-1])), k1)
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(left)} and {_shape_str(y.shape)})"
            )
    else:
        batch = _broadcast_batch(x.shape[:-2], y.shape[:-2])
        n = int(np.prod(batch))
        if k1 != k2:
            raise RuntimeError(
                "Expected size for first two dimensions of batch2 tensor to be: "
                f"[{n}, {k1}] but got: [{n}, {k2}]."
            )
    if x.dtype != y.dtype or type(x) is not type(y):
        _check_dtypes(a, b)


def _broadcast_batch(s1, s2):
    """Broadcast the batch dims, with PyTorch's message when they do not fit."""
    n = max(len(s1), len(s2))
    p1, p2 = (1,) * (n - len(s1)) + tuple(s1), (1,) * (n - len(s2)) + tuple(s2)
    for i, (u, v) in enumerate(zip(p1, p2)):
        if u != v and u != 1 and v != 1:
            raise RuntimeError(
                f"The size of tensor a ({u}) must match the size of tensor b ({v}) at non-singleton dimension {i}"
            )
    return tuple(v if u == 1 else u for u, v in zip(p1, p2))  # (a size 0 wins over 1)


def copied_operands(a, b, grads):
    """Which operands (arrays) PyTorch's ``matmul`` copies on the way to its ``mm``/``mv``/``bmm``, so
    that the node saves a copy (a later in-place write of the operand does not refuse backward).
    ``grads``: whether each operand requires grad (PyTorch's route depends on it).  Measured on
    PyTorch 2.13 (its ``_matmul_impl``):

    * Two 3-D operands where one has a single batch matrix, requires grad and the other has more:
      that one is squeezed to a matrix first.
    * A batched operand times a vector or matrix that requires grad is *folded*: the batched one
      (the right one transposed, ``b.mT``) is reshaped to one tall matrix, a copy where its memory
      cannot be viewed so.  Only the folded one is ever copied there.
    * Two batched operands run as one ``bmm``: each is expanded to the common batch shape and
      flattened to ``(batch, rows, cols)``, a copy where that cannot be a view.
    """
    if a.ndim == 3 and b.ndim == 3:
        if a.shape[0] == 1 < b.shape[0] and grads[0]:
            a = a[0]
        elif b.shape[0] == 1 < a.shape[0] and grads[1]:
            b = b[0]
    if a.ndim <= 2 and b.ndim <= 2:
        return False, False
    if b.ndim <= 2:
        return not _flattens_to_a_view(a, (-1, a.shape[-1])), False
    if a.ndim <= 2:
        return False, grads[0] and not _flattens_to_a_view(b.swapaxes(-1, -2), (-1, b.shape[-2]))
    batch = _broadcast_batch(a.shape[:-2], b.shape[:-2])
    return tuple(not _flattens_to_a_view(backend.get_array_module(x).broadcast_to(x, batch + x.shape[-2:]),
                                         (-1,) + x.shape[-2:]) for x in (a, b))


def _through_an_op(a_ndim, b_ndim):
    """Which operands PyTorch's ``matmul`` hands to its ``dot``/``mv``/``mm``/``bmm`` through an op of
    their own (``unsqueeze``, ``t()``/``mT``, ``reshape``, ``expand``)?  Such an operand's edge is that
    op's node, so the product saves the other operand for it even when the operand's own gradient
    goes nowhere (a view made under ``no_grad``: it requires grad, ``needs_input_grad`` is False).
    A vector times a matrix unsqueezes the vector; a batched operand is always reshaped; a matrix
    times a batched operand that requires grad is folded with ``t()`` of the matrix."""
    return a_ndim >= 3 or (a_ndim, b_ndim) == (1, 2) or (a_ndim == 2 and b_ndim >= 3), b_ndim >= 3


def _flattens_to_a_view(x, shape):
    """Does PyTorch's ``x.reshape(shape)`` return a view?  Always for an empty tensor."""
    return x.size == 0 or can_view(x, shape)


def _as_saved(t, copied, viewed):
    """What the product saves of operand ``t``: ``t`` itself, a clone (``copied``), or (``viewed``: the
    operand reached PyTorch's ``mm``/``bmm`` through an op, ``_through_an_op``) a view of it, as
    PyTorch saves that op's output: a later ``t.detach_()`` does not reach it, a write does.  Recorded,
    so that a second-order gradient still reaches ``t``."""
    if not (copied or viewed):
        return t
    with grad_mode.enable_grad():
        return t.clone() if copied else View.apply(t, t._data.shape)


class Matmul(Function):
    """``torch.matmul`` beyond 2-D @ 2-D: vectors and broadcast batches.

    PyTorch runs these cases through ``dot``/``mv``/``bmm`` plus reshapes, so the
    node a student sees is named after the last of those steps (the subclasses).
    """

    _backward_name = "UnsafeViewBackward0"
    _contiguous_result = True  # bmm/mm give a new contiguous result, whatever the operands' layout (layout.py)
    _profiler_name = "aten::matmul"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "matmul"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, b):
        _check_matmul(a, b)
        ctx.shapes = (a._data.shape, b._data.shape)
        # each operand is needed only for the other's gradient (PyTorch saves the same); one that
        # PyTorch copies on the way to its bmm/mm is saved as a copy, so changing it in place later
        # does not break backward
        grads = (a.requires_grad, b.requires_grad)
        copy_a, copy_b = copied_operands(a._data, b._data, grads)
        through_an_op = _through_an_op(a._data.ndim, b._data.ndim)
        wanted = [needs or (g and op) for needs, g, op in zip(ctx.needs_input_grad, grads, through_an_op)]
        ctx.save_for_backward(_as_saved(a, copy_a, through_an_op[0]) if wanted[1] else None,
                              _as_saved(b, copy_b, through_an_op[1]) if wanted[0] else None)
        return _utils.matmul(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx.shapes
        # Promote 1-D operands to matrices so one formula covers every case.
        a2_shape = (1,) + a_shape if len(a_shape) == 1 else a_shape
        b2_shape = b_shape + (1,) if len(b_shape) == 1 else b_shape
        # the gradient of the matrix-shaped product: batch dims + (rows, cols)
        batch = np.broadcast_shapes(tuple(a2_shape[:-2]), tuple(b2_shape[:-2]))
        g = grad.reshape(batch + (a2_shape[-2], b2_shape[-1]))
        ga = gb = None
        if ctx.needs_input_grad[0]:
            b2 = b.unsqueeze(-1) if b.ndim == 1 else b
            # batch dims that were broadcast are summed back (sum_to_size)
            ga = mm_mat1_backward(g, b2).sum_to_size(a2_shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            a2 = a.unsqueeze(0) if a.ndim == 1 else a
            gb = mm_mat2_backward(g, a2).sum_to_size(b2_shape).reshape(b_shape)
        return ga, gb

    @staticmethod
    def jvp(ctx, da, db):
        a, b = ctx.primals
        left = da @ b if da is not None else None  # matmul broadcasts and squeezes as forward did
        right = a @ db if db is not None else None
        return sum_tangents(left, right)


class Dot(Matmul):
    _backward_name = "DotBackward0"
    _autocast_op = "dot"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0), "tensor": Saved(1)}  # grad_fn._saved_* (_saved_attrs.py)


class Mv(Matmul):
    _backward_name = "MvBackward0"
    _autocast_op = "mv"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    _saved_attrs = {"self": Saved(0), "vec": Saved(1)}


class VecMat(Matmul):
    """1-D @ 2-D: PyTorch unsqueezes, multiplies, then squeezes the row away."""

    _backward_name = "SqueezeBackward4"
    _profiler_name = "aten::matmul"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "matmul"  # the op PyTorch's autocast lists (amp/autocast_mode.py)


class MatBatch(Matmul):
    """2-D @ batched: PyTorch transposes both and copies the result."""

    _backward_name = "CloneBackward0"
    _profiler_name = "aten::matmul"  # its torch.profiler event (not derived from the node name)
    _autocast_op = "matmul"  # the op PyTorch's autocast lists (amp/autocast_mode.py)


def matmul_function(x_ndim, y_ndim):
    """The Function (and so the grad_fn name) ``matmul`` uses for these ranks."""
    if x_ndim == 2 and y_ndim == 2:
        return Mm
    if x_ndim == 1 and y_ndim == 1:
        return Dot
    if x_ndim == 2 and y_ndim == 1:
        return Mv
    if x_ndim == 1 and y_ndim == 2:
        return VecMat
    if x_ndim == 2 and y_ndim > 2:
        return MatBatch
    return Matmul


def check_addmm(input, x, y):
    """PyTorch's errors for ``addmm(input, x, y)``, in its order (``input`` an array or None)."""
    if input is not None and input.dtype != y.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_np_name(input)} and {_np_name(y)}")
    for which, m in (("mat1", x), ("mat2", y)):
        if m.ndim != 2:
            raise RuntimeError(f"{which} must be a matrix, got {m.ndim}-D tensor")
    if x.dtype != y.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_np_name(x)} and {_np_name(y)}")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(x.shape)} and {_shape_str(y.shape)})"
        )


def _np_name(array):
    return _dtype.scalar_type_name(_dtype.from_numpy_dtype(array.dtype))


def addmm_array(input, x, y, beta=1, alpha=1):
    """``beta * input + alpha * (x @ y)`` on arrays, ``input`` broadcast over the product
    (None: no term).  float16/bfloat16 are multiplied and added in float32 and rounded once,
    as PyTorch's CPU addmm does; ``beta=0`` ignores ``input`` (a NaN in it does not spread)."""
    if x.dtype in REDUCED_FLOATS:
        wide = _scaled_array(accumulation_input(x) @ accumulation_input(y), alpha)
        if input is not None and beta != 0:
            wide += _scaled_array(accumulation_input(input), beta)
        return rounded_to(wide, x.dtype)
    out = _scaled_array(_utils.matmul(x, y), alpha)  # y may be a transposed view: BLAS reads it as it is
    if input is not None and beta != 0:
        out += _scaled_array(input, beta)  # in place, broadcast over the rows: no second array
    return out


def _broadcasts_to(shape, target):
    """Whether ``shape`` broadcasts to ``target`` (and not the other way round)."""
    return len(shape) <= len(target) and all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def _scaled_array(x, factor):
    return x if factor == 1 else x * x.dtype.type(factor)


class Addmm(Function):
    """``beta * input + alpha * (mat1 @ mat2)`` (``torch.addmm``), one node: ``AddmmBackward0``.

    ``input`` broadcasts to the product's shape (a bias row, usually), so its
    gradient is ``beta * grad`` summed back to its shape; ``mat1`` and ``mat2``
    get the matrix-product gradients, scaled by ``alpha``.
    """

    _backward_name = "AddmmBackward0"
    _autocast_op = "addmm"  # the op PyTorch's autocast lists (amp/autocast_mode.py)
    # grad_fn._saved_<name> (_saved_attrs.py), as Mm's: an operand is kept for the other's gradient
    _saved_attrs = {
        "alpha": lambda ctx: ctx.alpha, "beta": lambda ctx: ctx.beta, "mat1": Saved(0), "mat2": Saved(1),
        "mat1_sym_sizes": lambda ctx: sym_sizes(ctx.layouts[0]), "mat2_sym_sizes": lambda ctx: sym_sizes(ctx.layouts[1]),
        "mat1_sym_strides": lambda ctx: sym_strides(ctx.layouts[0]) if ctx.needs_input_grad[1] else (),
        "mat2_sym_strides": lambda ctx: sym_strides(ctx.layouts[1]) if ctx.needs_input_grad[2] else (),
    }

    @staticmethod
    def forward(ctx, input, mat1, mat2, beta=1, alpha=1):
        b, x, y = input._data, mat1._data, mat2._data
        check_addmm(b, x, y)
        refuse_bool(x, "addmm_impl_cpu_")
        target = (x.shape[0], y.shape[1])
        if not _broadcasts_to(b.shape, target):
            input.expand(*target)  # raises PyTorch's "The expanded size of the tensor ..." error
        ctx.save_for_backward(mat1 if ctx.needs_input_grad[2] else None, mat2 if ctx.needs_input_grad[1] else None)
        ctx.beta, ctx.alpha, ctx.input_shape = beta, alpha, b.shape
        if any(ctx.needs_input_grad):  # a graph node: keep the operands' layout
            ctx.layouts = (layout(x), layout(y))
        return addmm_array(b, x, y, beta, alpha)

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = ctx.saved_tensors
        need_input, need_mat1, need_mat2 = ctx.needs_input_grad[:3]
        g_input = _scaled(grad, ctx.beta).sum_to_size(ctx.input_shape) if need_input else None
        g_mat1 = mm_mat1_backward(grad, mat2, ctx.alpha) if need_mat1 else None
        g_mat2 = mm_mat2_backward(grad, mat1, ctx.alpha) if need_mat2 else None
        return g_input, g_mat1, g_mat2, None, None

    @staticmethod
    def jvp(ctx, d_input, d_mat1, d_mat2, *_):
        _, mat1, mat2 = ctx.primals[:3]
        product = mm_jvp(mat1, d_mat1, mat2, d_mat2, ctx.alpha) if d_mat1 is not None or d_mat2 is not None else None
        return sum_tangents(_scaled(d_input, ctx.beta) if d_input is not None else None, product)


class Trace(Function):
    """Sum of the main diagonal of a matrix; its gradient is ``grad`` times the identity."""

    _backward_name = "TraceBackward0"
    _autocast_op = "trace"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        ctx.shape, ctx.dtype = x.shape, x.dtype
        dtype = np.int64 if x.dtype.kind in "biu" else x.dtype
        return np.asarray(np.trace(x, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        eye = _utils._Tensor._make(np.eye(*ctx.shape, dtype=ctx.dtype))
        return grad * eye

    jvp = auto_linear(0)  # the trace of the tangent
