"""``torch.dtype`` objects and PyTorch's type-promotion rules.

Each edutorch dtype wraps a NumPy dtype and prints like PyTorch's
(``torch.float32``).  Promotion follows PyTorch, which differs from NumPy:
the default float is float32, a Python float does not widen a float tensor,
and a 0-dim tensor only changes the result's category, not its width.

``bfloat16`` (the brain float: float32's 8 exponent bits, 7 mantissa bits) has
no NumPy dtype of its own; the maintained ``ml_dtypes`` package provides one.
NumPy gives it the kind ``"V"``, not ``"f"``, so code that asks "is this array
floating point?" calls :func:`is_floating` instead of testing ``dtype.kind``.
"""
import builtins

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type, e.g. ``torch.float32`` (``torch.dtype``)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = category == 2
        self.is_signed = name != "bool" and name != "uint8"
        self.itemsize = self.np.itemsize
        self._category = category  # 0 bool, 1 integer, 2 floating point

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def is_complex(self):
        return False


float16 = half = dtype("float16", np.float16, 2)
float32 = float = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = short = dtype("int16", np.int16, 1)
int32 = int = dtype("int32", np.int32, 1)
int64 = long = dtype("int64", np.int64, 1)
bool = dtype("bool", np.bool_, 0)

_ALL = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool)
_FROM_NUMPY = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}

_default = {"float": float32}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The edutorch dtype for a NumPy dtype (TypeError for unsupported ones)."""
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        pass
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
            "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
        ) from None


_NP_BFLOAT16 = bfloat16.np


def is_floating(np_dtype):
    """Is this NumPy (or CuPy) dtype a floating-point one?  True for bfloat16 too."""
    return np_dtype.kind == "f" or np_dtype == _NP_BFLOAT16


def to_numpy_dtype(d):
    """Accept an edutorch dtype (or a NumPy dtype) and return the NumPy dtype."""
    return d.np if isinstance(d, dtype) else np.dtype(d)


def get_default_dtype():
    """``torch.get_default_dtype()``: the dtype of float tensors made from Python floats."""
    return _default["float"]


def set_default_dtype(d):
    """``torch.set_default_dtype``: only float32 and float64 are allowed, as in PyTorch."""
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default["float"] = d


def scalar_category(value):
    """Category of a Python scalar: 0 bool, 1 int, 2 float."""
    if isinstance(value, builtins.bool):
        return 0
    if isinstance(value, builtins.int):
        return 1
    return 2


def default_dtype_for_scalar(value):
    """The dtype ``torch.tensor(value)`` gives a Python scalar."""
    return (bool, int64, _default["float"])[scalar_category(value)]


def promote_types(a, b):
    """``torch.promote_types``: the smallest dtype that holds both (NumPy's rule, but
    float16 and bfloat16, neither of which holds the other, meet at float32)."""
    if a is b:
        return a
    if a._category != b._category:
        return a if a._category > b._category else b
    if {a, b} == {float16, bfloat16}:
        return float32
    return _FROM_NUMPY[np.promote_types(a.np, b.np)]


def result_type(*operands):
    """``torch.result_type`` over tensors and Python scalars, with PyTorch's three tiers.

    Dimensioned tensors decide first; 0-dim tensors and then Python scalars only
    matter when they are of a higher category (bool < integer < float).
    """
    tiers = [None, None, None]  # dimensioned tensors, 0-dim tensors, Python scalars
    for op in operands:
        if hasattr(op, "dtype") and hasattr(op, "ndim"):
            tier, d = (0 if op.ndim else 1), op.dtype
            if not isinstance(d, dtype):
                d = from_numpy_dtype(d)
        else:
            tier, d = 2, default_dtype_for_scalar(op)
        tiers[tier] = d if tiers[tier] is None else promote_types(tiers[tier], d)
    dimensioned, zero_dim, scalar = tiers
    result = dimensioned
    if zero_dim is not None and (result is None or zero_dim._category > result._category):
        result = zero_dim
    if scalar is not None and (result is None or scalar._category > result._category):
        result = scalar  # the default dtype of the scalar's category (int64 or float32)
    return result


# PyTorch's error messages name dtypes two ways: ATen's ScalarType ("Long") and
# the C++ type ("long int").
_SCALAR_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "uint8": "Byte",
                      "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}
_CPP_TYPE_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double", "uint8": "unsigned char",
                   "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}


def scalar_type_name(d):
    """``torch.int64`` → ``"Long"``, as in "not implemented for 'Long'"."""
    return _SCALAR_TYPE_NAMES[d.name]


def cpp_type_name(d):
    """``torch.int64`` → ``"long int"``, as in "expected m1 and m2 to have the same dtype"."""
    return _CPP_TYPE_NAMES[d.name]


class finfo:
    """``torch.finfo(dtype)``: the limits of a floating-point dtype (``eps``, ``max``, ``tiny``, ...).

    Read from NumPy's ``finfo`` (``ml_dtypes.finfo`` for bfloat16); ``resolution``
    is PyTorch's ``10 ** -precision``, the decimal digits the type holds.
    """

    def __init__(self, type=None):
        type = _default["float"] if type is None else type
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = ml_dtypes.finfo(type.np)
        self.bits = type.itemsize * 8
        self.dtype = type.name
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.smallest_normal = self.tiny = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(10.0 ** -info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """``torch.iinfo(dtype)``: the smallest and largest value of an integer dtype."""

    def __init__(self, type):
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = type.itemsize * 8
        self.dtype = type.name
        self.min = builtins.int(info.min)
        self.max = builtins.int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
