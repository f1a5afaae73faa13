"""Matrix ops and their gradients: ``triu``/``tril``, ``diagonal``/``diag``, ``dist``,
and ``torch.linalg``'s ``matrix_exp``, ``solve``, ``inv``, ``det``, ``svd`` and ``qr``.

Every op works on the last two dimensions and treats any leading ones as a
batch, as PyTorch does.  Forwards call ``numpy.linalg`` (LAPACK underneath,
like PyTorch on the CPU); backwards are the textbook matrix-calculus results,
written with Tensor ops (including these same Functions) so that
``create_graph=True`` differentiates them again.  Notation: ``X^T`` is
``X.mT``, the transpose of the last two dimensions.
"""
import numpy as np

from ... import _dtype, backend
from ..function import Function
from .tangents import auto_linear, auto_reduction, sum_tangents
from .utils import wrap_dim
from . import utils
from .reduction import norm_backward
from ..._dtype import is_floating as _is_floating


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a matrix was singular (a ``RuntimeError``)."""


# -- input checks, with PyTorch's messages ---------------------------------------------
def check_matrix(a, op, arg="A"):
    """At least 2 dimensions (a matrix or a batch of them)."""
    if a._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {arg} must have at least 2 dimensions.")


def check_float(a, op):
    if not _is_floating(a._data.dtype):
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. "
            f"Got {_dtype.scalar_type_name(a.dtype)}"
        )


def check_square(a, op):
    check_matrix(a, op)
    m, n = a._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {m} by {n} matrices")
    check_float(a, op)


def _t(x):
    """``x^T`` of a Tensor: swap the last two dimensions."""
    return x.transpose(-2, -1)


def _constant(array):
    return utils._Tensor._make(array)


def _eye(n, like):
    """An ``n x n`` identity with the dtype and device of the Tensor ``like``."""
    xp = backend.get_array_module(like._data)
    return _constant(xp.eye(n, dtype=like._data.dtype))


# -- triangles and diagonals ---------------------------------------------------------------
def _check_diagonal_arg(name, diagonal):
    if not isinstance(diagonal, (int, np.integer)) or isinstance(diagonal, bool):
        raise TypeError(
            f"{name}(): argument 'diagonal' (position 2) must be int, not {type(diagonal).__name__}"
        )


def column_major(x):
    """``x`` laid out as LAPACK leaves a matrix, and PyTorch returns it: each matrix column by column
    (strides (1, m)), the batch outermost.  So a ``reshape`` of such a result copies where PyTorch's does."""
    return x.swapaxes(-1, -2).copy().swapaxes(-1, -2)


class Triu(Function):
    """``torch.triu``: keep the upper triangle (from ``diagonal`` up), zero the rest.

    Backward: the gradient flows only through the kept entries, so it is the
    upper triangle of the incoming gradient.
    """

    _backward_name = "TriuBackward0"

    @staticmethod
    def forward(ctx, a, diagonal=0):
        _check_diagonal_arg("triu", diagonal)
        if a._data.ndim < 2:
            raise RuntimeError("triu: input tensor must have at least 2 dimensions")
        ctx.diagonal = diagonal
        return backend.get_array_module(a._data).triu(a._data, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Triu.apply(grad, ctx.diagonal), None

    jvp = auto_linear(0)  # (tangents.py: the op on the tangent)


class Tril(Function):
    """``torch.tril``: keep the lower triangle (up to ``diagonal``), zero the rest."""

    _backward_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, a, diagonal=0):
        _check_diagonal_arg("tril", diagonal)
        if a._data.ndim < 2:
            raise RuntimeError("tril: input tensor must have at least 2 dimensions")
        ctx.diagonal = diagonal
        return backend.get_array_module(a._data).tril(a._data, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Tril.apply(grad, ctx.diagonal), None

    jvp = auto_linear(0)


def _diagonal_dims(ndim, dim1, dim2):
    """Wrap ``dim1``/``dim2``; PyTorch refuses two names for the same dimension."""

    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _writable_diagonal(x, offset, d1, d2):
    """``x.diagonal(...)`` as a *writable* view (NumPy marks it read-only; PyTorch's is not)."""
    view = x.diagonal(offset, d1, d2)
    if isinstance(view, np.ndarray) and x.flags.writeable:  # CuPy's views are writable already
        view.flags.writeable = True
    return view


class Diagonal(Function):
    """``torch.diagonal(input, offset, dim1, dim2)``: a view of a diagonal.

    The diagonal becomes the last dimension.  Backward puts the gradient back
    on that diagonal of a zero tensor (``DiagonalPlace``).
    """

    _backward_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, a, offset=0, dim1=0, dim2=1):
        x = a._data
        d1, d2 = _diagonal_dims(x.ndim, dim1, dim2)
        ctx.args = (x.shape, offset, d1, d2)
        # a view: it shares memory and the version counter with ``a``
        return utils._Tensor._make(_writable_diagonal(x, offset, d1, d2), False, None, 0,
                                   a._version_counter)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalPlace.apply(grad, *ctx.args), None, None, None

    jvp = auto_linear(0)


class DiagonalCopy(Diagonal):
    """``torch.diag(matrix, k)``: the ``k``-th diagonal, as a new tensor (not a view)."""

    _backward_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, a, offset=0, dim1=0, dim2=1):
        x = a._data
        d1, d2 = _diagonal_dims(x.ndim, dim1, dim2)
        ctx.args = (x.shape, offset, d1, d2)
        return x.diagonal(offset, d1, d2).copy()


class DiagonalPlace(Function):
    """The gradient of ``diagonal``: zeros of ``shape`` with ``src`` on the diagonal.

    (PyTorch's ``diagonal_backward``; its own gradient is ``diagonal`` again.)
    """

    _backward_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, src, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        xp = backend.get_array_module(src._data)
        out = xp.zeros(shape, dtype=src._data.dtype)
        _writable_diagonal(out, offset, d1, d2)[...] = src._data
        return out

    @staticmethod
    def backward(ctx, grad):
        return (DiagonalCopy.apply(grad, *ctx.args),) + (None,) * 4

    jvp = auto_linear(0)


class DiagEmbed(Function):
    """``torch.diag(vector, k)``: a square matrix with ``vector`` on its ``k``-th diagonal."""

    _backward_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, v, offset=0):
        ctx.offset = offset
        n = v._data.shape[0] + abs(offset)
        xp = backend.get_array_module(v._data)
        out = xp.zeros((n, n), dtype=v._data.dtype)
        _writable_diagonal(out, offset, 0, 1)[...] = v._data
        return out

    @staticmethod
    def backward(ctx, grad):
        return DiagonalCopy.apply(grad, ctx.offset, 0, 1), None

    jvp = auto_linear(0)


# -- dist -----------------------------------------------------------------------------------
def _p_norm(x, p):
    """The p-norm of all the elements of the array ``x`` (``p`` may be 0 or ``±inf``)."""
    xp = backend.get_array_module(x)
    ax = xp.abs(x)
    if p == float("inf"):
        return ax.max() if x.size else xp.zeros((), x.dtype)
    if p == -float("inf"):
        return ax.min()
    if p == 0:
        return (ax != 0).sum().astype(x.dtype)
    if p == 2:
        return xp.sqrt((x * x).sum())
    return (ax ** p).sum() ** (1.0 / p)


class Dist(Function):
    """``torch.dist(a, b, p)``: the p-norm of ``a - b`` (broadcast), a 0-d tensor.

    Backward: the gradient of a p-norm ``||d||`` is ``d |d|^(p-2) / ||d||^(p-1)``
    (``sign(d)`` for p=1, zero for p=0, shared among the maxima for p=inf);
    ``a`` gets it and ``b`` gets minus it, each summed back to its own shape.
    """

    _backward_name = "DistBackward0"
    _autocast_op = "dist"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, a, b, p=2):
        if isinstance(p, str):
            raise TypeError("dist(): argument 'p' (position 3) must be Number, not str")
        x, y = utils.binary_arrays(a, b)
        if not _is_floating(x.dtype):
            raise RuntimeError(
                "norm(): input dtype should be either floating point or complex. "
                f"Got {_dtype.scalar_type_name(_dtype.from_numpy_dtype(x.dtype))} instead."
            )
        try:
            out = utils._Tensor._make(np.asarray(_p_norm(x - y, p), dtype=x.dtype))
        except ValueError:
            raise utils.broadcast_error(x, y) from None
        ctx.p = p
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, norm = ctx.saved_tensors
        g = norm_backward(grad, a - b, ctx.p, norm)
        # the engine sums each gradient back to its input's (pre-broadcast) shape
        return g, None if g is None else -g, None

    jvp = auto_reduction  # a norm of everything: Σ backward(ones) · tangent (tangents.py)


# -- matrix exponential ---------------------------------------------------------------------
def _expm_array(A):
    """``exp(A)`` of a (batch of) square matrices: scaling and squaring + Taylor series.

    exp(A) = exp(A / 2^s)^(2^s); with ||A / 2^s|| <= 1/2 an 18-term Taylor
    series is accurate to float64 precision.  Computed in float64.
    """
    xp = backend.get_array_module(A)
    A64 = A.astype(np.float64)
    norm = float(xp.abs(A64).sum(axis=-2).max()) if A64.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    X = A64 / (2.0 ** s)
    eye = xp.broadcast_to(xp.eye(A.shape[-1]), A64.shape)
    result, term = eye.copy(), eye.copy()
    for i in range(1, 19):
        term = term @ X / i
        result = result + term
    for _ in range(s):
        result = result @ result
    return result.astype(A.dtype)


class MatrixExp(Function):
    """``torch.matrix_exp`` / ``torch.linalg.matrix_exp``.

    Backward uses a classic identity: for the block matrix
    ``E = [[A^T, G], [0, A^T]]``, the upper-right block of ``exp(E)`` is the
    gradient of ``<G, exp(A)>`` w.r.t. ``A``.  It is written with tensor ops
    (``cat`` and this same Function), so ``create_graph=True`` works.
    """

    _backward_name = "LinalgMatrixExpBackward0"

    @staticmethod
    def forward(ctx, A):
        check_square(A, "linalg.matrix_exp")
        ctx.save_for_backward(A)
        return _expm_array(A._data)

    @staticmethod
    def backward(ctx, grad):
        from ... import cat, zeros_like

        (A,) = ctx.saved_tensors
        n = A.shape[-1]
        At = _t(A)
        block = cat([cat([At, grad], -1), cat([zeros_like(At), At], -1)], -2)
        return MatrixExp.apply(block)[..., :n, n:]

    @staticmethod
    def jvp(ctx, dA):
        """The same block identity forward: exp([[A, dA], [0, A]])'s upper-right block is the
        derivative of exp at A in the direction dA, which is backward's formula transposed:
        backward(dAᵀ)ᵀ."""
        return _t(MatrixExp.backward(ctx, _t(dA)))


# -- solve, inv, det ----------------------------------------------------------------------------
def _solve_b_is_vector(A, B):
    """PyTorch reads ``B`` as a (batch of) vector(s) if it is 1-D or ``A``'s shape minus one dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


class Solve(Function):
    """``torch.linalg.solve(A, B, left)``: the ``X`` with ``A X = B`` (``X A = B`` if not ``left``).

    Backward, from ``dX = A^{-1} (dB - dA X)``: ``grad_B = solve(A^T, grad_X)``
    and ``grad_A = -grad_B X^T``.  For ``left=False`` the same with every
    product reversed: ``grad_B`` solves ``grad_B A^T = grad_X``, ``grad_A = -X^T grad_B``.
    """

    _backward_name = "LinalgSolveExBackward0"
    _column_major_result = True  # LAPACK's layout, as PyTorch returns it (column_major)
    _autocast_op = "linalg_solve"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, A, B, left=True):
        check_square(A, "linalg.solve")
        a, b = A._data, B._data
        if a.dtype != b.dtype:
            raise RuntimeError(
                "linalg.solve: Expected A and B to have the same dtype, but found A of type "
                f"{_dtype.scalar_type_name(A.dtype)} and B of type {_dtype.scalar_type_name(B.dtype)} instead"
            )
        vector = _solve_b_is_vector(a, b)
        if vector:
            b = b[..., None]  # a vector right side: solve for a one-column matrix
        n = a.shape[-1]
        if (b.shape[-2] if left else b.shape[-1]) != n:
            raise RuntimeError(
                "linalg.solve: Incompatible shapes of A and B for the equation "
                f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})"
            )
        if not left:  # X A = B  <=>  A^T X^T = B^T
            a, b = a.swapaxes(-1, -2), b.swapaxes(-1, -2)
        xp = backend.get_array_module(a)
        try:
            X = xp.linalg.solve(a, b)
        except xp.linalg.LinAlgError:
            raise _LinAlgError(
                "torch.linalg.solve: The solver failed because the input matrix is singular."
            ) from None
        if not left:
            X = X.swapaxes(-1, -2)
        if vector:
            X = X[..., 0]
        elif left:
            X = column_major(X)
        X = utils._Tensor._make(X)
        ctx.vector, ctx.left = vector, left
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        if ctx.vector:  # work with the vectors as one-column matrices
            grad, X = grad.unsqueeze(-1), X.unsqueeze(-1)
        grad_B = Solve.apply(_t(A), grad, ctx.left)
        # batch dims that were broadcast are summed back by the engine
        grad_A = -(grad_B @ _t(X)) if ctx.left else -(_t(X) @ grad_B)
        return grad_A, grad_B.squeeze(-1) if ctx.vector else grad_B, None

    @staticmethod
    def jvp(ctx, dA, dB, _=None):
        """From A X = B: dX = A^{-1} (dB - dA X) (for X A = B: (dB - X dA) A^{-1})."""
        A, X = ctx.primals[0], ctx.result
        if ctx.vector:
            X, dB = X.unsqueeze(-1), None if dB is None else dB.unsqueeze(-1)
        by_A = None if dA is None else -(dA @ X if ctx.left else X @ dA)
        dX = Solve.apply(A, sum_tangents(dB, by_A), ctx.left)
        return dX.squeeze(-1) if ctx.vector else dX


def _first_zero_pivot(a):
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK's ``info``).

    Only used to word the error for a singular matrix as PyTorch does.
    """
    u = np.array(a, dtype=np.float64).reshape(-1, *a.shape[-2:])[0]
    n = u.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return n


class Inv(Function):
    """``torch.linalg.inv(A)``.  Backward: ``grad_A = -A^{-T} grad A^{-T}``."""

    _backward_name = "LinalgInvExBackward0"
    _column_major_result = True  # LAPACK's layout, as PyTorch returns it (column_major)
    _autocast_op = "linalg_inv"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, A):
        check_square(A, "linalg.inv")
        xp = backend.get_array_module(A._data)
        try:
            inv = xp.linalg.inv(A._data)
        except xp.linalg.LinAlgError:
            raise _LinAlgError(
                f"linalg.inv: The diagonal element {_first_zero_pivot(backend.to_device(A._data, 'cpu'))} "
                "is zero, the inversion could not be completed because the input matrix is singular."
            ) from None
        out = utils._Tensor._make(column_major(inv))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (inv,) = ctx.saved_tensors
        inv_t = _t(inv)
        return -(inv_t @ grad @ inv_t)

    @staticmethod
    def jvp(ctx, dA):
        inv = ctx.result
        return -(inv @ dA @ inv)  # d(A^{-1}) = -A^{-1} dA A^{-1}


def _cofactors(a):
    """The cofactor matrix ``adj(A)^T`` from the SVD: ``det(U) det(Vh) U diag(prod_{j != i} S_j) Vh``.

    Defined for every square matrix, singular ones included.
    """
    xp = backend.get_array_module(a)
    U, S, Vh = xp.linalg.svd(a)
    others = xp.where(xp.eye(S.shape[-1], dtype=bool), 1, S[..., None, :]).prod(axis=-1)
    sign = xp.linalg.det(U) * xp.linalg.det(Vh)  # each is +1 or -1
    return sign[..., None, None] * (U * others[..., None, :]) @ Vh


class Det(Function):
    """``torch.linalg.det(A)``.

    Backward (Jacobi's formula): ``grad_A = grad * adj(A)^T``, which is
    ``grad * det(A) * A^{-T}`` for an invertible ``A``.  For a singular ``A``
    the cofactors come from the SVD instead (``_cofactors``), computed as a
    constant: that case supports first derivatives only.
    """

    _backward_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, A):
        check_square(A, "linalg.det")
        xp = backend.get_array_module(A._data)
        out = utils._Tensor._make(xp.asarray(xp.linalg.det(A._data), dtype=A._data.dtype))
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        A, det = ctx.saved_tensors
        grad = grad.unsqueeze(-1).unsqueeze(-1)
        if bool((det._data != 0).all()):
            return grad * det.unsqueeze(-1).unsqueeze(-1) * _t(Inv.apply(A))
        return grad * _constant(_cofactors(A._data).astype(A._data.dtype))

    @staticmethod
    def jvp(ctx, dA):
        """Jacobi's formula forward: d det = Σ_ij cofactor_ij dA_ij, the cofactors being
        backward of ones (a reduction of each matrix: tangents.py's rule over the last two dims)."""
        cofactors = Det.backward(ctx, ctx.result.detach().new_ones(ctx.result.shape))
        return (cofactors * dA).sum((-2, -1))


class Slogdet(Function):
    """``torch.linalg.slogdet(A)``: ``(sign, log|det A|)``.

    Backward (PyTorch's ``slogdet_backward`` for real ``A``): ``grad_A = grad_logabsdet * A^{-T}``.
    The sign is piecewise constant: it is in the graph (it requires grad) but its gradient is
    ignored, and when only the sign was used ``A`` gets no gradient at all (None).
    """

    _backward_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, A):
        check_square(A, "linalg.slogdet")
        xp = backend.get_array_module(A._data)
        sign, logabs = (utils._Tensor._make(xp.asarray(x, dtype=A._data.dtype)) for x in xp.linalg.slogdet(A._data))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(A, sign)  # the sign too, as PyTorch's node (a later write to it refuses backward)
        return sign, logabs

    @staticmethod
    def backward(ctx, gsign, glogabs):
        A, _ = ctx.saved_tensors
        if glogabs is None:
            return None
        return glogabs.unsqueeze(-1).unsqueeze(-1) * _t(Inv.apply(A))

    @staticmethod
    def jvp(ctx, dA):
        """d log|det A| = trace(A^{-1} dA); the sign's tangent is 0."""
        sign, _ = ctx.result
        A, = ctx.primals
        return sign.new_zeros(sign.shape), (_t(Inv.apply(A)) * dA).sum((-2, -1))


# -- SVD ----------------------------------------------------------------------------------------
def svd_backward(gU, gS, gVh, U, S, Vh):
    """The gradient of ``A = U diag(S) Vh`` (reduced SVD), PyTorch's ``svd_backward`` for real A.

    With ``E[i, j] = S[j]^2 - S[i]^2`` (and 1 on the diagonal) and
    ``skew(X) = X - X^T``::

        gA = U [ (skew(U^T gU) S + S skew(Vh gVh^T)) / E  +  diag(gS) ] Vh

    plus, for a tall (or wide) A, the part of ``gU`` (or ``gVh``) outside the
    span of ``U`` (or ``V``).  Missing gradients (``None``) are zero.

    Defined only when the singular values are distinct (``E`` has no zero off
    the diagonal) and, for a non-square A with ``gU``/``gVh``, all nonzero:
    otherwise ``U``/``V`` are not unique and the result is inf or nan, as in
    PyTorch.  Losses that depend only on ``S`` (norms, ``svdvals``) use the
    first, always-defined formula.
    """
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:  # only S is used: gA = U diag(gS) Vh
        return U @ (gS.unsqueeze(-1) * Vh)
    k = S.shape[-1]
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye(k, S)
    if gU is not None and gVh is not None:
        UtgU, VhgV = U.mT @ gU, Vh @ gVh.mT
        gA = ((UtgU - UtgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - VhgV.mT)) / E
    elif gU is not None:
        UtgU = U.mT @ gU
        gA = (UtgU - UtgU.mT) * (S.unsqueeze(-2) / E)
    else:
        VhgV = Vh @ gVh.mT
        gA = S.unsqueeze(-1) * ((VhgV - VhgV.mT) / E)
    if gS is not None:
        gA = gA + gS.unsqueeze(-1) * _eye(k, S)
    if m > n and gU is not None:
        # gA = [U gA + (I - U U^T) gU S^{-1}] Vh
        gUSinv = gU / S.unsqueeze(-2)
        gA = U @ gA + gUSinv - U @ (U.mT @ gUSinv)
        return gA @ Vh
    if m < n and gVh is not None:
        # gA = U [gA Vh + S^{-1} gVh (I - V Vh)]
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA @ Vh + SinvgVh - (SinvgVh @ Vh.mT) @ Vh
        return U @ gA
    return U @ gA @ Vh


class Svd(Function):
    """``torch.linalg.svd(A, full_matrices)``: ``A = U diag(S) Vh``, S descending.

    With ``full_matrices=True`` the extra columns of ``U`` (rows of ``Vh``)
    are not unique, so backward uses only the first ``k = min(m, n)`` of them,
    as PyTorch does.
    """

    _backward_name = "LinalgSvdBackward0"
    _column_major_result = True  # LAPACK's layout, as PyTorch returns it (column_major)
    _autocast_op = "linalg_svd"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, A, full_matrices=True):
        check_matrix(A, "linalg.svd")
        check_float(A, "linalg.svd")
        xp = backend.get_array_module(A._data)
        U, S, Vh = xp.linalg.svd(A._data, full_matrices=full_matrices)
        U, S, Vh = utils._Tensor._make(column_major(U)), utils._Tensor._make(S), utils._Tensor._make(column_major(Vh))
        ctx.set_materialize_grads(False)  # unused outputs send None, not zeros (see svd_backward)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if U.shape[-1] != k or Vh.shape[-2] != k:  # full_matrices: keep the first k vectors
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = None if gU is None else gU[..., :k]
            gVh = None if gVh is None else gVh[..., :k, :]
        return svd_backward(gU, gS, gVh, U, S, Vh), None

    @staticmethod
    def jvp(ctx, dA, _=None):
        """PyTorch's ``svd_jvp`` for real A.  With dP = Uᵀ dA V (its diagonal is dS) and E as in
        backward, the rotations Uᵀ dU and Vᵀ dV are ``sym(dP S) / E`` and ``sym(S dP) / E`` on dP's
        off-diagonal part (sym(X) = X + Xᵀ); a tall (or wide) A adds the part of dA outside the span
        of U (or V).  The extra vectors of ``full_matrices`` get zero tangents, as in PyTorch."""
        U, S, Vh = ctx.result
        m, n, k = dA.shape[-2], dA.shape[-1], S.shape[-1]
        U, V = U[..., :k], _t(Vh[..., :k, :])
        dP = _t(U) @ dA @ V
        eye = _eye(k, S)
        off = dP * (1 - eye)
        E = (S * S).unsqueeze(-2) - (S * S).unsqueeze(-1) + eye
        by_S_right, by_S_left = off * S.unsqueeze(-2), S.unsqueeze(-1) * off
        dU = U @ ((by_S_right + _t(by_S_right)) / E)
        dV = V @ ((by_S_left + _t(by_S_left)) / E)
        if m > k:
            outside = dA @ (V / S.unsqueeze(-2))
            dU = dU + outside - U @ (_t(U) @ outside)
        if n > k:
            outside = _t(dA) @ (U / S.unsqueeze(-2))
            dV = dV + outside - V @ (_t(V) @ outside)
        dU, dVh = _padded_with_zeros(dU, ctx.result[0].shape[-1], -1), _padded_with_zeros(_t(dV), ctx.result[2].shape[-2], -2)
        return dU, dP.diagonal(0, -2, -1), dVh


def _padded_with_zeros(t, size, dim):
    """``t`` with zeros appended along ``dim`` up to ``size`` (the extra vectors of a full SVD)."""
    if t.shape[dim] == size:
        return t
    from ... import cat

    shape = list(t.shape)
    shape[dim] = size - t.shape[dim]
    return cat([t, t.new_zeros(shape)], dim)


# -- QR -------------------------------------------------------------------------------------------
def _copyltu(M):
    """The symmetric matrix with ``M``'s lower triangle: ``tril(M) + tril(M, -1)^T``."""
    return Tril.apply(M, 0) + _t(Tril.apply(M, -1))


def _qr_backward_tall(gQ, gR, Q, R):
    """QR gradient for ``m >= n`` (reduced): ``gA = (gQ + Q copyltu(M)) R^{-T}``, ``M = R gR^T - gQ^T Q``.

    ``R`` must be invertible (``A`` of full column rank).
    """
    M = R @ _t(gR) - _t(gQ) @ Q
    B = gQ + Q @ _copyltu(M)
    return _t(Solve.apply(R, _t(B)))  # B R^{-T} = (R^{-1} B^T)^T


class Qr(Function):
    """``torch.linalg.qr(A, mode)``: ``A = Q R``, ``Q`` with orthonormal columns, ``R`` upper triangular.

    Backward for ``m >= n`` is ``_qr_backward_tall``.  For a wide ``A = [X | Y]``
    (``m < n``): ``X = Q R_1`` is square and ``R_2 = Q^T Y``, so
    ``gY = Q gR_2`` and ``X`` gets the square-case gradient with
    ``gQ + Y gR_2^T`` in place of ``gQ``.
    """

    _backward_name = "LinalgQrBackward0"
    _column_major_result = True  # LAPACK's layout, as PyTorch returns it (column_major)
    _autocast_op = "linalg_qr"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, A, mode="reduced"):
        check_matrix(A, "linalg.qr")
        if mode not in ("reduced", "complete", "r"):
            raise RuntimeError(
                f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                "(default), 'r', or 'complete'"
            )
        check_float(A, "linalg.qr")
        xp = backend.get_array_module(A._data)
        m, n = A._data.shape[-2:]
        if mode == "r":
            Q, R = xp.zeros((0,), dtype=A._data.dtype), xp.linalg.qr(A._data, mode="r")
        else:
            Q, R = xp.linalg.qr(A._data, mode=mode)
        Q, R = utils._Tensor._make(Q if mode == "r" else column_major(Q)), utils._Tensor._make(column_major(R))
        ctx.mode, ctx.m, ctx.n = mode, m, n
        ctx.save_for_backward(Q, R)  # as PyTorch's node: not A (a later write to A does not refuse backward)
        return Q, R

    @staticmethod
    def check_differentiable(ctx):
        """PyTorch's refusals, for backward and forward mode alike."""
        if ctx.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                "linalg.qr."
            )
        if ctx.mode == "complete" and ctx.m > ctx.n:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )

    @staticmethod
    def backward(ctx, gQ, gR):
        Qr.check_differentiable(ctx)
        Q, R = ctx.saved_tensors
        m = ctx.m
        if m >= ctx.n:
            return _qr_backward_tall(gQ, gR, Q, R), None
        from ... import cat

        Y, gR1, gR2 = Q @ R[..., m:], gR[..., :m], gR[..., m:]  # Y = A[..., m:], from what is kept
        gX = _qr_backward_tall(gQ + Y @ _t(gR2), gR1, Q, R[..., :m])
        return cat([gX, Q @ gR2], -1), None

    @staticmethod
    def jvp(ctx, dA, _=None):
        """For m >= n, ``_qr_jvp_tall``; for a wide A = [X | Y]: X's square case, and
        R_2 = Qᵀ Y gives dR_2 = dQᵀ Y + Qᵀ dY."""
        Qr.check_differentiable(ctx)
        A, (Q, R), m = ctx.primals[0], ctx.result, ctx.m
        if m >= ctx.n:
            return _qr_jvp_tall(dA, Q, R)
        from ... import cat

        dQ, dR1 = _qr_jvp_tall(dA[..., :m], Q, R[..., :m])
        return dQ, cat([dR1, _t(dQ) @ A[..., m:] + _t(Q) @ dA[..., m:]], -1)


def _qr_jvp_tall(dA, Q, R):
    """The tangents of A = Q R for m >= n: with X = dA R^{-1} and C = Qᵀ X, C = Qᵀ dQ + dR R^{-1}
    is a skew matrix Ω (from C's strict lower triangle) plus an upper triangular one U = C - Ω;
    then dR = U R and dQ = X - Q U."""
    X = _t(Solve.apply(_t(R), _t(dA)))  # dA R^{-1} = (R^{-T} dAᵀ)ᵀ
    C = _t(Q) @ X
    lower = Tril.apply(C, -1)
    U = C - lower + _t(lower)
    return X - Q @ U, U @ R


# -- symmetric eigendecomposition ---------------------------------------------------------------
class Eigh(Function):
    """``torch.linalg.eigh(A, UPLO)``: ``A = V diag(L) V^T`` for symmetric ``A``, ``L`` ascending.

    Only the ``UPLO`` triangle of ``A`` is read.  Backward (PyTorch's
    ``linalg_eig_backward`` for Hermitian input), with ``E[i, j] = L[j] - L[i]``::

        S  = skew(V^T gV) / 2,   skew(X) = X - X^T
        gA = V (S / E + diag(gL)) V^T          (the diagonal of S / E replaced by gL)

    ``1 / E`` blows up for repeated eigenvalues: the gradient of the
    eigenvectors is defined only when the eigenvalues are distinct.
    """

    _backward_name = "LinalgEighBackward0"
    _column_major_result = True  # LAPACK's layout, as PyTorch returns it (column_major)
    _autocast_op = "linalg_eigh"  # the op PyTorch's autocast lists (amp/autocast_mode.py)

    @staticmethod
    def forward(ctx, A, UPLO="L"):
        if not _is_floating(A._data.dtype):  # PyTorch has no integer kernel (its error, before the shape checks)
            raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_dtype.scalar_type_name(A.dtype)}'")
        check_square(A, "linalg.eigh")
        if UPLO not in ("L", "U"):
            raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
        xp = backend.get_array_module(A._data)
        L, V = xp.linalg.eigh(A._data, UPLO=UPLO)
        L, V = utils._Tensor._make(L), utils._Tensor._make(column_major(V))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        if gV is None:  # eigenvalues only: gA = V diag(gL) V^T
            return V @ (gL.unsqueeze(-1) * _t(V)), None
        VtgV = _t(V) @ gV
        S = (VtgV - _t(VtgV)) * 0.5
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        n = L.shape[-1]
        eye = _constant(np.eye(n, dtype=L._data.dtype))
        inner = S / (E + eye) * (1 - eye)  # the diagonal of E set to 1, then of S / E to 0
        if gL is not None:
            inner = inner + gL.unsqueeze(-1) * eye
        return V @ inner @ _t(V), None

    @staticmethod
    def jvp(ctx, dA, _=None):
        """With P = V^T dA V (dA taken as given, as PyTorch's ``linalg_eig_jvp``):
        dL = diag(P),  dV = V (P / E) with the diagonal of P / E set to 0."""
        L, V = ctx.result
        P = _t(V) @ dA @ V
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        eye = _constant(np.eye(L.shape[-1], dtype=L._data.dtype))
        return P.diagonal(0, -2, -1), V @ (P / (E + eye) * (1 - eye))
