"""``torch.nn.utils.parametrizations``: ``orthogonal``, ``weight_norm``, ``spectral_norm``.

Each is a small Module ``P`` registered with
:func:`~edutorch.nn.utils.parametrize.register_parametrization`, so that
``module.weight`` is computed as ``P(original)`` on every access.

* ``orthogonal``: ``weight`` is always an orthogonal matrix (``W^T W = I``);
  the unconstrained ``original`` is mapped onto orthogonal matrices by the
  matrix exponential or the Cayley map of a skew-symmetric matrix, or by a
  product of Householder reflections.
* ``weight_norm``: ``weight = g * v / ||v||`` with ``original0 = g``,
  ``original1 = v``.
* ``spectral_norm``: ``weight = W / sigma(W)``, ``sigma`` by power iteration.
"""
from enum import Enum, auto

import numpy as np

from ... import allclose, arange, cat, eye, geqrf, linalg, matrix_exp, randn, zeros_like
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q, eps=None):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * float(np.finfo(Q.dtype.np).eps)  # torch.finfo(Q.dtype).eps
    return allclose(Q.mT @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of the QR decomposition of ``A``, signs fixed so that ``R`` has a positive diagonal."""
    X, tau = geqrf(A)
    Q = linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps an unconstrained matrix ``X`` to an orthogonal one.

    With ``use_trivialization=True`` (the default), the buffer ``base`` holds
    an orthogonal matrix and the result is ``base @ map(X)``; assigning a
    weight stores it in ``base`` and resets ``X`` so that ``map(X) = I``.
    """

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        # here n >= k: we build an n x n orthogonal matrix and keep k columns
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # append n - k zero columns
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT  # skew-symmetric: exp(A) and cayley(A) are orthogonal
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # the signs chosen by right_inverse (a constant: .int() has no gradient)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        """An ``X`` with ``forward(X) == Q`` (``Q`` is made orthogonal first if needed)."""
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. "
                    f"Got a tensor of shape {Q.shape}."
                )
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if not hasattr(self, "base"):
                return self._right_inverse_householder(Q, transpose)
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                # complete Q to a square matrix with random columns, then orthogonalize
                N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            # X = -I: maps to I for every orthogonal_map, so forward returns ``base``
            neg_Id = zeros_like(Q_init)
            r = arange(min(n, k))
            neg_Id[..., r, r] = -1.0  # the diagonal of a (maybe non-square) matrix
            return neg_Id

    def _right_inverse_householder(self, Q, transpose):
        """Without a ``base``, only the Householder map can be inverted: from ``geqrf``."""
        if self.orthogonal_map != _OrthMaps.householder:
            raise NotImplementedError(
                "It is not possible to assign to the matrix exponential or the Cayley "
                "parametrizations when use_trivialization=False."
            )
        # geqrf: Householder vectors below the diagonal, R on and above it; the
        # diagonal becomes the signs forward multiplies by
        A, tau = geqrf(Q)
        diag = A.diagonal(dim1=-2, dim2=-1).sign()
        diag[tau == 0.0] *= -1
        r = arange(A.shape[-1])
        A[..., r, r] = diag
        return A.transpose(-2, -1) if transpose else A


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` to be an orthogonal matrix (or batch of them)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# -- weight_norm -------------------------------------------------------------------------
class _WeightNorm(Module):
    """``weight = g * v / ||v||`` from ``(g, v)``; ``right_inverse`` splits a weight into them."""

    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module, name="weight", dim=0):
    """Weight normalization as a parametrization: ``original0`` is ``g``, ``original1`` is ``v``.

    A ``state_dict`` saved with the old hook-based ``weight_norm``
    (``weight_g``/``weight_v``) still loads: a load pre-hook renames the keys.
    """
    _weight_norm_module = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm_module, unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# -- spectral_norm -----------------------------------------------------------------------
class _SpectralNorm(Module):
    """``weight / sigma``; ``sigma ~= u^T W v`` with ``u``, ``v`` refined by power iteration.

    The buffers ``_u`` and ``_v`` are updated in place at every forward in
    training mode; at registration they get 15 iterations.
    """

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        """Move ``dim`` to the front and flatten the rest into columns."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        """Refine ``_u`` and ``_v`` in place: ``u <- normalize(W v)``, ``v <- normalize(W^T u)``."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            # a vector: its spectral norm is its Euclidean norm (F.normalize)
            norm = (weight * weight).sum() ** 0.5
            return weight / norm if norm.item() > self.eps else weight / self.eps
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones: the buffers may change in place before this graph's backward runs
        u = self._u.clone()
        v = self._v.clone()
        sigma = (weight_mat * u.reshape(-1, 1) * v).sum()  # u^T W v
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization as a parametrization of ``module.<name>``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from .spectral_norm import _is_conv_transpose

        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
