"""Helpers shared by the layer Functions."""
from ..._tensor import Tensor


def constant(array):
    """An array a layer computed in NumPy (or CuPy), as a Tensor that autograd sees as a constant.

    Forwards and NumPy backwards work on raw arrays (``t._data``).  A result
    saved for backward, a mask inside a backward formula, or a gradient
    computed on arrays enters the Tensor world through here: no copy, no
    ``requires_grad``, no ``grad_fn`` (the internal ``Tensor._make``).
    """
    return Tensor._make(array)
