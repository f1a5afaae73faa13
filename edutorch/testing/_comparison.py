"""``torch.testing.assert_close``: are two tensors (or nests of them) close, and if not, where?

The comparison runs in two steps, as in PyTorch's ``torch/testing/_comparison.py``:

1. ``_pairs`` walks ``actual`` and ``expected`` together (sequences by
   position, mappings by key) down to *pairs* of leaves, and checks the
   structure on the way: a length or key mismatch, or a pair of leaves no
   comparison handles, fails before any value is compared.
2. Each pair is compared by its kind: ``None``, ``bool``, a Python number, or
   a tensor-like (tensors, NumPy arrays).  The first one that differs fails
   with PyTorch's message: how many elements mismatch, and the greatest
   absolute and relative differences with their index.

Two values are close when ``|actual - expected| <= atol + rtol * |expected|``;
the default tolerances depend on the dtype (table ``_DTYPE_PRECISIONS``).
"""
import cmath
from collections.abc import Mapping, Sequence

import numpy as np

from .. import _dtype

# {dtype: (rtol, atol)}, PyTorch's defaults; any other dtype (integers, bool) compares exactly
_DTYPE_PRECISIONS = {
    _dtype.float16: (0.001, 1e-5),
    _dtype.bfloat16: (0.016, 1e-5),
    _dtype.float32: (1.3e-6, 1e-5),
    _dtype.float64: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {bool: _dtype.int64, int: _dtype.int64, float: _dtype.float64}


class _Mismatch(Exception):
    """A failed check: the exception type to raise, its message and where in the nest (``id``)."""

    def __init__(self, type_, msg, id_=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id_

    def to_error(self, msg=None):
        """The user-facing exception; ``msg`` (a string, or a function of the message) replaces the text."""
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.id:
            text += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
        return self.type(msg(text) if callable(msg) else text)


def default_tolerances(*dtypes, dtype_precisions=None):
    """The loosest ``(rtol, atol)`` of the given dtypes."""
    table = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[table.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol, id_):
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", id_)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


# -- step 1: pairs of leaves -----------------------------------------------------------
def _is_sequence(x):
    return isinstance(x, Sequence) and not isinstance(x, str)


def _pairs(actual, expected, id_=()):
    """``[(actual_leaf, expected_leaf, id)]``, refusing mismatched structures."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id_)
        return [p for i in range(len(actual)) for p in _pairs(actual[i], expected[i], (*id_, i))]
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                                            f"Additional keys in the actual mapping: {sorted(set(actual) - set(expected))}",
                            id_)
        keys = list(actual)
        try:
            keys = sorted(keys)
        except TypeError:
            pass
        return [p for k in keys for p in _pairs(actual[k], expected[k], (*id_, k))]
    return [(actual, expected, id_)]


def _kind(actual, expected):
    """Which comparison handles this pair of leaves (PyTorch tries them in this order)."""
    from .._tensor import Tensor

    if actual is None or expected is None:
        return "none"
    if all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        return "bool"
    if all(isinstance(x, (int, float, np.number)) and not isinstance(x, complex) for x in (actual, expected)):
        return "number"
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if related and all(isinstance(x, (Tensor, np.ndarray)) for x in (actual, expected)):
        return "tensor"
    return None


# -- step 2: comparing one pair ------------------------------------------------------------
def _mismatch_msg(identifier, equality, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    """PyTorch's report: header, ``extra`` line, greatest absolute and relative differences."""
    def diff_line(kind, diff, idx, tol):
        line = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_idx, atol) + diff_line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", rtol == 0 and atol == 0, f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


def _tensor_mismatch_msg(actual, expected, matches, rtol, atol):
    """Counts the mismatches and finds the greatest differences among them (matches count as 0)."""
    shape = tuple(matches.shape)
    total = matches.numel()
    mismatches = total - int(matches.sum().item())
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not a.is_floating_point():  # integers and bools: differences in int64
        a, e = a.long(), e.long()
    abs_diff = (a - e).abs()
    abs_diff[m] = 0
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0

    def greatest(diff):
        i = int(np.argmax(diff.numpy()))  # the first NaN, else the first maximum, as torch.max
        index = tuple(int(k) for k in np.unravel_index(i, shape)) if shape else ()
        return diff[i].item(), index

    (abs_max, abs_idx), (rel_max, rel_idx) = greatest(abs_diff), greatest(rel_diff)
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    return _mismatch_msg("Tensor-likes", rtol == 0 and atol == 0, extra, abs_max, abs_idx, atol, rel_max,
                         rel_idx, rtol)


def _compare_numbers(actual, expected, id_, rtol, atol, equal_nan, check_dtype):
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)]], rtol, atol, id_)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id_)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_mismatch_msg(actual, expected, rtol, atol), id_)


def _as_tensor(x):
    from .._creation import as_tensor

    return x.detach() if hasattr(x, "detach") else as_tensor(x)


def _compare_tensors(actual, expected, id_, rtol, atol, equal_nan, check_device, check_dtype):
    from .. import _functional, promote_types

    actual, expected = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id_)
    for name, check in (("shape", True), ("device", check_device), ("dtype", check_dtype)):
        a, e = getattr(actual, name), getattr(expected, name)
        if check and a != e:
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.", id_)
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    matches = _functional.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        msg = _scalar_mismatch_msg(actual.item(), expected.item(), rtol, atol)
    else:
        msg = _tensor_mismatch_msg(actual, expected, matches, rtol, atol)
    raise _Mismatch(AssertionError, msg, id_)


def _compare(actual, expected, id_, options):
    kind = _kind(actual, expected)
    if kind == "none":
        if not (actual is None and expected is None):
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", id_)
    elif kind == "bool":
        if bool(actual) is not bool(expected):
            raise _Mismatch(AssertionError, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", id_)
    elif kind == "number":
        _compare_numbers(actual, expected, id_, options["rtol"], options["atol"], options["equal_nan"],
                         options["check_dtype"])
    else:
        _compare_tensors(actual, expected, id_, options["rtol"], options["atol"], options["equal_nan"],
                         options["check_device"], options["check_dtype"])


def _check_leaves(pairs, options):
    """Step 1's last check: every pair has a comparison, and its tolerances are valid."""
    for actual, expected, id_ in pairs:
        kind = _kind(actual, expected)
        if kind is None:
            raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                                       f"{type(actual)} and {type(expected)}.", id_)
        if kind in ("number", "tensor") and (options["rtol"] is None) != (options["atol"] is None):
            _tolerances((), options["rtol"], options["atol"], id_)  # raises PyTorch's ValueError


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """``torch.testing.assert_close``: raise ``AssertionError`` unless ``actual`` and ``expected`` are close.

    Tensors must have the same shape, device and (with ``check_dtype``) dtype;
    their values must satisfy ``|actual - expected| <= atol + rtol * |expected|``
    elementwise (``rtol``/``atol`` both given, or both left to the dtype's
    defaults); NaNs are equal only with ``equal_nan``.  Sequences and mappings
    are compared item by item.  ``msg`` replaces the message (a string) or edits
    it (a function).  ``check_layout``/``check_stride``: edutorch tensors are
    all dense and have no strides, so these have nothing to check.
    """
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype)
    try:
        pairs = _pairs(actual, expected)
        _check_leaves(pairs, options)
    except _Mismatch as failure:
        raise failure.to_error() from None
    for a, e, id_ in pairs:
        try:
            _compare(a, e, id_, options)
        except _Mismatch as failure:
            raise failure.to_error(msg) from None
