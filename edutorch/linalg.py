"""``torch.linalg``: norms, decompositions and solvers of (batches of) matrices.

The differentiable ops are Functions in ``autograd/_functions/linalg.py``;
this module is the public front: argument handling, defaults, and the matrix
norms, which PyTorch itself builds from other ops (so their ``grad_fn`` is
that of the last op: ``nuc`` is a ``sum`` of singular values, ``2`` their
``amax``, ``1`` the ``amax`` of column sums of ``|A|``).
"""
import numpy as np

from . import backend, return_types
from ._tensor import Tensor
from .autograd._functions.utils import wrap_dim
from .autograd._functions import linalg as _F
from .autograd._functions import reduction as _reduction
from ._dtype import is_floating as _is_floating

__all__ = [
    "LinAlgError", "det", "householder_product", "inv", "matrix_exp", "matrix_norm", "matrix_rank", "norm", "qr",
    "slogdet", "solve", "svd", "svdvals", "vector_norm",
]

LinAlgError = _F._LinAlgError

_INF = float("inf")


# -- norms ------------------------------------------------------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements by default); ``ord`` may be 0 or ±inf."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    if dtype is not None:
        x = x.to(dtype)
    if x._data.size == 0 and ord in (_INF, -_INF) and dim is None:
        raise RuntimeError(
            "linalg.vector_norm cannot compute the inf norm on an empty tensor because the "
            "operation does not have an identity"
        )
    return _reduction.Norm.apply(x, ord, dim, keepdim)


def _matrix_dims(A, dim):
    ndim = A._data.ndim
    d0, d1 = (wrap_dim(d, ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _singular_value_norm(A, reduce, d0, d1, keepdim):
    """``reduce`` (sum/amax/amin) of the singular values of the matrices in dims ``d0, d1``."""
    batch = [d for d in range(A._data.ndim) if d not in (d0, d1)]
    S = svdvals(A.permute(*batch, d0, d1))  # move the matrix dims to the end
    out = reduce(S)
    if keepdim:  # two size-1 dims at the end, moved back to where d0 and d1 were
        order = batch + [d0, d1]
        out = out.unsqueeze(-1).unsqueeze(-1).permute(*(order.index(d) for d in range(len(order))))
    return out


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms: ``'fro'``, ``'nuc'`` (sum of singular values), ``±2`` (largest/smallest
    singular value), ``±1`` (max/min column sum of ``|A|``), ``±inf`` (max/min row sum)."""
    _F.check_matrix(A, "linalg.matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    _F.check_float(A, "linalg.matrix_norm")
    d0, d1 = _matrix_dims(A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc":
        return _singular_value_norm(A, lambda S: S.sum(-1), d0, d1, keepdim)
    if ord in (2, -2):
        # ord 2 of an empty matrix is a constant 0 in PyTorch: no gradient, no tangent (-2 raises, as
        # amin of nothing)
        reduce = (lambda S: S.amax(-1) if S.shape[-1] else S.detach().sum(-1)) if ord == 2 else (lambda S: S.amin(-1))
        return _singular_value_norm(A, reduce, d0, d1, keepdim)
    if ord in (1, -1, _INF, -_INF):
        if ord in (_INF, -_INF):  # row sums instead of column sums
            d0, d1 = d1, d0
        if not keepdim and d0 < d1:
            d1 -= 1  # d0 is gone after the first reduction
        sums = A.abs().sum(d0, keepdim=keepdim)
        if ord < 0:
            return sums.amin(d1, keepdim=keepdim)
        # the max of no sums is a constant 0 in PyTorch (no gradient, no tangent), as ord 2's
        return sums.amax(d1, keepdim=keepdim) if sums.shape[d1] else sums.detach().sum(d1, keepdim=keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm or a matrix norm, chosen from ``ord`` and ``dim``.

    A string ``ord`` or a 2-element ``dim`` means a matrix norm; a 1-element
    ``dim`` a vector norm; with neither, ``ord=None`` is the 2-norm of all
    elements and any other ``ord`` needs a 1-D or 2-D input.
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}"
            )
        if len(dims) == 2 or isinstance(ord, str):
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A._data.ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A._data.ndim}D."
        )
    if A._data.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


# -- products ---------------------------------------------------------------------------------
def matmul(input, other):
    """``torch.linalg.matmul``: the same as ``torch.matmul``."""
    return input.matmul(other)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``torch.linalg.diagonal``: ``A.diagonal`` with the batch-friendly defaults (the last two dims)."""
    return A.diagonal(offset, dim1, dim2)


def matrix_power(A, n):
    """``A @ A @ ... @ A`` (``n`` times) by repeated squaring; ``A^0 = I``, negative ``n`` inverts first."""
    _F.check_square(A, "linalg.matrix_power")
    if n == 1:  # as PyTorch: a copy, in the graph (CloneBackward0)
        return A.clone()
    if n == 0:  # the identity, shaped like A, written into a copy of A (its gradient 0), as PyTorch
        from ._creation import eye

        return A.clone().copy_(eye(A.shape[-1], dtype=A.dtype).expand(*A.shape))
    if n < 0:
        A, n = inv(A), -n
    result = None
    square = A
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    return result


def multi_dot(tensors, *, out=None):
    """The product of several matrices (the first and last may be vectors), left to right."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = result @ t
    return result


def vecdot(x, y, *, dim=-1):
    """The dot product along ``dim`` (real tensors: ``(x * y).sum(dim)``)."""
    return (x * y).sum(dim)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (broadcasting the others)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    from ._functional import stack

    input, other = input.broadcast_to(np.broadcast_shapes(input.shape, other.shape)), \
        other.broadcast_to(np.broadcast_shapes(input.shape, other.shape))
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]

    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]],
                 wrap_dim(dim, input.ndim))


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse ``V diag(1/s) U^T``, singular values below the tolerance dropped.

    The default ``rtol`` is ``eps * max(m, n)`` (with ``atol`` unset), as in PyTorch; built on ``svd``,
    so its gradient is defined where the kept singular values are distinct.
    """
    if 0 in A.shape[-2:]:  # no singular values: the empty (..., n, m) result, in the graph as PyTorch's
        return A.mT * 0
    U, S, Vh = svd(A, full_matrices=False)
    if rtol is None:
        rtol = np.finfo(A._data.dtype).eps * max(A.shape[-2:]) if atol is None or atol == 0 else 0.0
    largest = S.amax(-1, keepdim=True)
    cutoff = largest * rtol if atol is None else (largest * rtol).clamp_min(atol)
    keep = S > cutoff
    from ._functional import where

    S_inv = where(keep, 1 / where(keep, S, S.new_ones(())), S.new_zeros(()))
    return (Vh.mT * S_inv.unsqueeze(-2)) @ U.mT


# -- decompositions --------------------------------------------------------------------------
def svd(A, full_matrices=True, *, driver=None):
    """``U, S, Vh`` with ``A = U @ diag(S) @ Vh`` (a named tuple, ``S`` descending).

    ``driver`` only matters for CUDA in PyTorch; it is accepted and ignored.
    See ``svd_backward`` for when the gradient is defined.
    """
    return return_types.linalg_svd(_F.Svd.apply(A, full_matrices))


def svdvals(A, *, driver=None):
    """The singular values of ``A``, descending.

    Computed through ``svd`` (as PyTorch does under autograd), so the
    ``grad_fn`` is ``LinalgSvdBackward0`` and the gradient is ``U diag(g) Vh``.
    """
    return _F.Svd.apply(A, False)[1]


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix: ``A = V diag(L) V^T``.

    Only the lower (``UPLO='L'``) or upper triangle is read.  Eigenvectors are
    defined up to sign (and, for repeated eigenvalues, up to a rotation): the
    gradient through them needs distinct eigenvalues (see ``Eigh``).
    """
    return return_types.linalg_eigh(_F.Eigh.apply(A, UPLO))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of a symmetric matrix, ascending (gradient ``V diag(g) V^T``)."""
    return _F.Eigh.apply(A, UPLO)[0]


def qr(A, mode="reduced"):
    """``Q, R`` with ``A = Q @ R``; ``mode`` is ``'reduced'``, ``'complete'`` or ``'r'``."""
    return return_types.linalg_qr(_F.Qr.apply(A, mode))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """How many singular values exceed ``max(atol, rtol * largest)`` (an int64 tensor).

    With neither tolerance given, ``rtol = eps * max(m, n)`` (NumPy's default too).
    ``hermitian=True`` uses the absolute eigenvalues of a symmetric ``A``.
    """
    if A._data.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    x = A._data
    if not _is_floating(x.dtype):
        raise RuntimeError("This function doesn't handle types other than float and double")
    xp = backend.get_array_module(x)
    if hermitian:
        S = xp.abs(xp.linalg.eigvalsh(x))
    else:
        S = xp.linalg.svd(x, compute_uv=False)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else np.finfo(x.dtype).eps * max(x.shape[-2:])
    atol = 0.0 if atol is None else atol
    smax = S.max(axis=-1, keepdims=True) if S.shape[-1] else xp.zeros(S.shape[:-1] + (1,), x.dtype)
    tol = xp.maximum(atol, rtol * smax)
    return Tensor._make((S > tol).sum(axis=-1).astype(np.int64))


# -- solvers and matrix functions ------------------------------------------------------------
def solve(A, B, *, left=True):
    """The ``X`` with ``A @ X = B`` (or ``X @ A = B`` when ``left=False``)."""
    return _F.Solve.apply(A, B, left)


def inv(A):
    return A.inverse()


def det(A):
    return A.det()


def slogdet(A):
    """``(sign, log|det A|)``: the determinant's sign and the log of its size (``-inf`` for a
    singular matrix); the gradient of ``logabsdet`` is ``A^{-T}`` (``Slogdet``)."""
    return return_types.linalg_slogdet(_F.Slogdet.apply(A))


def matrix_exp(A):
    return A.matrix_exp()


def householder_product(A, tau):
    """The first ``k`` columns of ``H_1 H_2 ... H_k`` (``torch.linalg.householder_product``).

    ``H_i = I - tau_i v_i v_i^T``, where ``v_i`` is column ``i`` of ``A`` below
    the diagonal, with a 1 on the diagonal and zeros above (the form ``geqrf``
    returns).  Written with tensor ops, so autograd differentiates it.
    """
    from ._creation import eye

    n, k = A.shape[-2], A.shape[-1]
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal "
                           "to input.shape[-1]")
    if tau.shape[-1] > k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal "
                           "to tau.shape[-1]")
    V = A.tril(-1) + eye(n, k, dtype=A.dtype, device=A.device)
    Q = eye(n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, n)
    for i in range(tau.shape[-1]):
        v = V[..., :, i:i + 1]  # (..., n, 1)
        t = tau[..., i:i + 1].unsqueeze(-1)  # (..., 1, 1)
        Q = Q - (Q @ v) @ (v.transpose(-2, -1) * t)  # Q <- Q H_i
    return Q[..., :, :k]


from ._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.linalg", "edutorch.linalg")  # out-of-scope names say why
