"""Helpers shared by the layer Functions."""
from ..._tensor import Tensor
from ... import _dtype


def constant(array):
    """An array a layer computed in NumPy (or CuPy), as a Tensor that autograd sees as a constant.

    Forwards work on raw arrays (``t._data``); backward formulas are Tensor
    ops.  An array a forward computed and a backward formula reads (argmax
    indices, averaging matrices, running statistics) enters the Tensor world
    through here: no copy, no ``requires_grad``, no ``grad_fn`` (the internal
    ``Tensor._make``), so autograd treats it as a constant.
    """
    return Tensor._make(array)


def floating_only(input, kernel):
    """The array of ``input``, refused as PyTorch refuses an integer or bool tensor for a
    floating-point kernel: ``"elu_cpu" not implemented for 'Long'``."""
    x = input._data
    if x.dtype.kind in "biu":
        name = _dtype.scalar_type_name(_dtype.from_numpy_dtype(x.dtype))
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
    return x
