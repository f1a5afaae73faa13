"""``torch.functional``: ops PyTorch writes in Python on top of other ops.

``einsum``, ``meshgrid``, ``broadcast_tensors``, ``tensordot``, ``cdist``,
``unique``.  Each is a composition of differentiable Tensor ops, so its
gradient comes from theirs (PyTorch calls such ops *CompositeImplicitAutograd*).
"""
import builtins
import math
import string
import warnings

import numpy as np

from ._tensor import Tensor
from .autograd._functions.utils import wrap_dim
from .autograd.function import composite_op  # autocast casts a composite op once, at entry

__all__ = ["broadcast_tensors", "cdist", "einsum", "meshgrid", "tensordot", "unique"]


# -- einsum -------------------------------------------------------------------------------
def _parse_einsum(equation, operands):
    """Split ``equation`` into one letter string per operand and the output letters.

    ``...`` becomes fresh upper-case letters, aligned from the right across
    operands (their dimensions broadcast like element-wise ops).
    """
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    spare = [c for c in string.ascii_uppercase if c not in equation]
    n_ell = builtins.max([t.ndim - len(s.replace("...", "")) for s, t in zip(terms, operands) if "..." in s],
                         default=0)
    ell = "".join(spare[:n_ell])
    inputs = []
    for i, (s, t) in enumerate(zip(terms, operands)):
        if "..." in s:
            k = t.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[n_ell - k:] if k else "")
        if len(s) != t.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the "
                f"number of dimensions ({t.ndim}) for operand {i}"
                + ("" if "..." in terms[i] else " and no ellipsis was given"))
        inputs.append(s)
    if arrow:
        output = rhs.replace("...", ell)
    else:  # implicit output: the ellipsis, then the letters seen once, in alphabetical order
        letters = "".join(inputs)
        output = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    return inputs, output


def _diagonals(t, letters):
    """A letter repeated in one operand (``'ii'``) takes that operand's diagonal."""
    while len(set(letters)) < len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        i = letters.index(c)
        j = letters.index(c, i + 1)
        t = t.diagonal(0, i, j)  # the diagonal becomes the last dimension
        letters = letters[:i] + letters[i + 1:j] + letters[j + 1:] + c
    return t, letters


def _align(t, letters, order):
    """Permute ``t`` to the letters' order in ``order`` and add size-1 dims for the others."""
    present = [c for c in order if c in letters]
    t = t.permute([letters.index(c) for c in present])
    return t.reshape([t.shape[present.index(c)] if c in letters else 1 for c in order])


def _sum_out(t, letters, needed):
    """Sum ``t`` over its letters that are not ``needed``."""
    gone = [i for i, c in enumerate(letters) if c not in needed]
    if not gone:
        return t, letters
    return t.sum(gone), "".join(c for c in letters if c in needed)


def _contract_pair(a, a_letters, b, b_letters, needed, sizes, output):
    """Multiply two operands and sum the letters that are not ``needed`` later.

    As in PyTorch's einsum: with nothing to sum, an element-wise product (both
    aligned to the output's order first); otherwise the letters of one operand only
    are summed there, and the rest is a batched matrix product ``bmm`` of
    (batch, left, shared) by (batch, shared, right), whose result is then *viewed*
    as (batch..., left..., right...).
    """
    letters = a_letters + b_letters
    if all(c in needed for c in letters):
        order = "".join(dict.fromkeys([c for c in output if c in letters] + list(letters)))  # output's first
        return _align(a, a_letters, order) * _align(b, b_letters, order), order
    a, a_letters = _sum_out(a, a_letters, needed | set(b_letters))
    b, b_letters = _sum_out(b, b_letters, needed | set(a_letters))
    batch = "".join(c for c in a_letters if c in b_letters and c in needed)
    shared = "".join(c for c in a_letters if c in b_letters and c not in needed)
    left = "".join(c for c in a_letters if c not in b_letters)
    right = "".join(c for c in b_letters if c not in a_letters)

    def matrices(t, letters, groups):
        t = t.permute([letters.index(c) for c in "".join(groups)])
        t = t.expand(*[sizes[c] for c in "".join(groups)])  # a size-1 dim broadcasts
        return t.reshape([math.prod(sizes[c] for c in g) for g in groups])

    product = matrices(a, a_letters, (batch, left, shared)).bmm(matrices(b, b_letters, (batch, shared, right)))
    return product.view([sizes[c] for c in batch + left + right]), batch + left + right


@composite_op("einsum")
def einsum(equation, *operands):
    """Einstein summation: multiply the operands along shared letters, sum the letters not in the output.

    ``einsum('ij,jk->ik', a, b)`` is ``a @ b``; ``'ii->i'`` a diagonal; ``'bij->bji'`` a transpose.
    The operands are contracted two at a time, left to right, as PyTorch does: a pair
    with a letter to sum becomes a ``bmm`` (so the result is a view of its result, as in
    PyTorch), a pair without one an element-wise product.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    inputs, output = _parse_einsum(equation, operands)
    sizes = {}
    terms = []
    for i, (t, letters) in enumerate(zip(operands, inputs)):
        t, letters = _diagonals(t, letters)
        for c, n in zip(letters, t.shape):
            seen = sizes.get(c, 1)
            if n != seen and n != 1 and seen != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                                   f"broadcast with previously seen size {seen}")
            sizes[c] = n if seen == 1 else seen  # a size 1 broadcasts (to 0 too: max() would keep the 1)
        terms.append((t, letters))
    for c in output:
        if c not in sizes:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
    t, letters = terms[0]
    if len(terms) == 1:  # a permutation to the output's order, then a sum of the other letters
        order = output + "".join(c for c in letters if c not in output)
        t, letters = _sum_out(t.permute([letters.index(c) for c in order]), order, output)
    for k in range(1, len(terms)):
        later = set(output).union(*(set(s) for _, s in terms[k + 1:]))
        t, letters = _contract_pair(t, letters, *terms[k], later, sizes, output)
    t = t.permute([letters.index(c) for c in output]) if letters != output else t
    expanded = [sizes[c] for c in output]
    return t.expand(*expanded) if list(t.shape) != expanded else t


# -- broadcasting and grids ------------------------------------------------------------
def broadcast_tensors(*tensors):
    """Expand every tensor to their common broadcast shape (views, no copies); a tensor that has that
    shape already is returned itself, as PyTorch's ``expand_outplace`` does (no ``ExpandBackward0``)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(*shape) for t in tensors)


def broadcast_shapes(*shapes):
    """``torch.broadcast_shapes``: the shape that NumPy-style broadcasting gives."""
    try:
        from ._tensor import Size

        return Size(np.broadcast_shapes(*(tuple(s) if not isinstance(s, int) else (s,) for s in shapes)))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape. "
                           f"Mismatch is between {list(shapes[0])} and {list(shapes[1])}") from None


_MESHGRID_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: ``indexing='ij'`` (the default) or ``'xy'`` (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = [t.shape[0] for t in flat]
    grids = [t.reshape([-1 if i == d else 1 for i in range(len(flat))]).expand(*shape)
             for d, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# -- contractions and distances ----------------------------------------------------------
@composite_op("tensordot")
def _contracted_dim(dim, t):
    """``dim`` of ``t`` made positive, with PyTorch's IndexError (a 0-d tensor has no dim to contract)."""
    if t.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, t.ndim)


def tensordot(a, b, dims=2, out=None):
    """Sum the products over ``dims``: the last ``dims`` of ``a`` with the first of ``b``,
    or the listed pairs ``dims=([dims of a], [dims of b])``."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(dims_a) != len(dims_b):
            raise RuntimeError("both dimension lists should have same length")
    dims_a = [_contracted_dim(d, a) for d in dims_a]
    dims_b = [_contracted_dim(d, b) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if b.shape[db] == 1:  # a contracted dim of size 1 broadcasts: PyTorch sums the other side first
            a = a.sum(da, keepdim=True)
        elif a.shape[da] == 1:
            b = b.sum(db, keepdim=True)
        elif a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} "
                               f"in dim {da} and second has size {b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(free_a + dims_a).reshape(int(np.prod([a.shape[d] for d in free_a])), k)
    right = b.permute(dims_b + free_b).reshape(k, int(np.prod([b.shape[d] for d in free_b])))
    result = (left @ right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    if out is not None:
        out.copy_(result)
        return out
    return result


@composite_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if x1.ndim < 2 else 2} got: {min(x1.ndim, x2.ndim)}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    return diff.norm(p, dim=-1)


# -- unique ----------------------------------------------------------------------------
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted), with optional inverse indices and counts; not differentiable."""
    x = input._data
    if dim is None:
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(x.shape)
    else:
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
        inverse = inverse.reshape(-1)
    result = (Tensor._make(values),)
    if return_inverse:
        result += (Tensor._make(inverse.astype(np.int64)),)
    if return_counts:
        result += (Tensor._make(counts.astype(np.int64)),)
    return result[0] if len(result) == 1 else result


from ._numpy_compat import patch_module as _patch_module  # noqa: E402

_patch_module(globals())  # torch.sum(x, axis=0): NumPy's argument names too
