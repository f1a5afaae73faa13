"""``repr(tensor)`` the way PyTorch prints it (``torch/_tensor_str.py``).

One formatter per tensor picks a style for all its elements: integers as is,
integral floats as ``1.``, other floats with 4 decimals, or scientific notation
when the values span too wide a range; then every element is padded to the
same width and rows are nested with brackets, summarised with ``...`` above
1000 elements.
"""
import math

import numpy as np

from . import _dtype
from . import backend

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
SCI_MODE = None  # None: chosen per tensor; True/False: always/never scientific

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """``torch.set_printoptions``: digits, summarisation threshold, edge items, line width.

    ``profile`` ('default', 'short', 'full') sets the first four at once; the
    other arguments then override it.  ``sci_mode=None`` restores the automatic choice.
    """
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        p = _PROFILES[profile]
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = (p["precision"], p["threshold"], p["edgeitems"],
                                                      p["linewidth"])
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
    SCI_MODE = sci_mode


class _Formatter:
    """Decide how to print every element of ``values`` (a flat float/int array).

    As in PyTorch, only the non-zero finite values decide the style and the
    width: zeros, ``nan`` and ``inf`` are printed in whatever style results.
    """

    def __init__(self, values, is_float):
        self.is_float, self.int_mode, self.sci_mode, self.width = is_float, True, False, 1
        if not is_float:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        shown = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if not shown.size:
            return
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        big, small = np.abs(shown).max(), np.abs(shown).min()
        self.sci_mode = bool(big / small > 1000.0 or big > 1e8 or small < 1e-4)
        if SCI_MODE is not None:
            self.sci_mode = SCI_MODE
        self.width = max(len(self._plain(v)) for v in shown.tolist())

    def _plain(self, v):
        if not self.is_float:
            return str(v)
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}" if math.isinf(v) or math.isnan(v) else f"{v:.0f}."
        return f"{v:.{PRECISION}f}"

    def format(self, v):
        return self._plain(v).rjust(self.width)


def _flat_for_format(arr, summarize):
    """The elements that will be shown (edges only when summarising)."""
    if not summarize or arr.ndim == 0:
        return arr.reshape(-1)
    parts = []
    if arr.shape[0] > 2 * EDGEITEMS:
        for sub in (arr[:EDGEITEMS], arr[-EDGEITEMS:]):
            parts.append(_flat_for_format(sub, summarize))
    else:
        parts = [_flat_for_format(sub, summarize) for sub in arr] if arr.ndim > 1 else [arr]
    return np.concatenate([p.reshape(-1) for p in parts]) if parts else arr.reshape(-1)


def _format_array(arr, fmt, indent, summarize):
    """Nested bracketed text for ``arr``; ``indent`` is the column after the bracket."""
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        items = arr.tolist()
        if summarize and len(items) > 2 * EDGEITEMS:
            # PyTorch writes the gap as " ..." and counts it as one element of the line
            texts = [fmt.format(v) for v in items[:EDGEITEMS]] + [" ..."] + [fmt.format(v) for v in items[-EDGEITEMS:]]
        else:
            texts = [fmt.format(v) for v in items]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    n = arr.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        rows = [_format_array(arr[i], fmt, indent + 1, summarize) for i in range(EDGEITEMS)]
        rows += ["..."] + [_format_array(arr[i], fmt, indent + 1, summarize) for i in range(n - EDGEITEMS, n)]
    else:
        rows = [_format_array(sub, fmt, indent + 1, summarize) for sub in arr]
    sep = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def _suffixes(t):
    out = []
    if t.is_cuda:
        out.append("device='cuda:0'")
    if t.is_meta:  # no values to show: PyTorch prints "..." and the size
        out += ["device='meta'", f"size={tuple(t._data.shape)}"]
    if t._data.size == 0 or t.is_meta:
        # no values to tell an int64 tensor from a float one: the dtype is always named
        if t._data.ndim != 1 and not t.is_meta:
            out.append(f"size={tuple(t._data.shape)}")
        default = t.dtype == _dtype.get_default_dtype()
    else:
        default = t.dtype in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool)
    if not default:
        out.append(f"dtype={t.dtype}")
    # PyTorch prints the node's class name: ``Error`` for a node whose name() is
    # ``torch::autograd::Error`` (a once_differentiable backward's output)
    try:
        node = None if t.grad_fn is None else type(t.grad_fn).__name__
    except RuntimeError:  # a view whose graph PyTorch refuses to read (its base was written since)
        node = "Invalid"
    if node is not None:
        out.append(f"grad_fn=<{node}>")
    elif t.requires_grad:
        out.append("requires_grad=True")
    if t._fw_grad is not None:  # a dual tensor of forward-mode AD
        out.append(f"tangent={t._fw_grad}")
    return out


def format_values(t, indent):
    """Just the bracketed values of ``t`` (used by ``Parameter``'s repr too)."""
    if t.is_meta:
        return "..."
    arr = backend.to_device(t._data, "cpu")
    if arr.size == 0:
        return "[]"
    if arr.dtype == _dtype.bfloat16.np:  # printed by value, as float32 holds each exactly
        arr = arr.astype(np.float32)
    summarize = arr.size > THRESHOLD
    is_float = arr.dtype.kind == "f"
    if arr.dtype.kind == "b":
        fmt = _Formatter(np.array([]), False)
        fmt._plain = lambda v: str(bool(v))
        fmt.width = max(len(str(bool(v))) for v in _flat_for_format(arr, summarize).tolist())
    else:
        fmt = _Formatter(_flat_for_format(arr, summarize), is_float)
    return _format_array(arr, fmt, indent, summarize)


def _str(t, prefix="tensor("):
    body = format_values(t, len(prefix))
    return _add_suffixes(prefix + body, _suffixes(t), len(prefix))


def _add_suffixes(text, suffixes, indent):
    """Append ``, requires_grad=True`` etc.; a suffix that would pass LINEWIDTH starts a new line."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1  # as PyTorch counts it
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"
