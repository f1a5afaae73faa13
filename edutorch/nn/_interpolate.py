"""``F.interpolate``: resize the spatial dims, one dim at a time.

Every mode here is *separable*: a 2-D (or 3-D) resize is a 1-D resize of each
spatial dim in turn.  A 1-D resize picks source positions for every output
position (PyTorch's coordinate rules) and mixes the neighbouring input values
with weights, using ``index_select`` and ``*``/``+`` only, so the gradient is
the adjoint (the weights scattered back) without a hand-written backward.
"""
import math

import numpy as np

_MODES = {"nearest": 1, "nearest-exact": 1, "area": 1, "linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


def _scale(in_size, out_size, scale_factor, align_corners):
    """Input pixels per output pixel, as PyTorch's ``area_pixel_compute_scale``."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale_factor if scale_factor is not None else in_size / out_size


def _positions(mode, in_size, out_size, scale, align_corners):
    """Source indices and weights per output position: ``[(index array, weight array), ...]``."""
    dst = np.arange(out_size, dtype=np.float64)
    if mode == "nearest":
        return [(np.minimum(np.floor(dst * scale), in_size - 1).astype(np.int64), None)]
    if mode == "nearest-exact":
        return [(np.minimum(np.floor((dst + 0.5) * scale), in_size - 1).astype(np.int64), None)]
    src = dst * scale if align_corners else (dst + 0.5) * scale - 0.5
    if mode == "bicubic":
        base = np.floor(src)
        t = src - base
        a = -0.75  # the cubic convolution kernel PyTorch uses
        weights = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                   ((a + 2) * t - (a + 3)) * t * t + 1,
                   ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                   ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]
        return [(np.clip(base + k - 1, 0, in_size - 1).astype(np.int64), w) for k, w in enumerate(weights)]
    src = np.maximum(src, 0.0)  # linear modes clamp below (PyTorch)
    low = np.minimum(np.floor(src), in_size - 1).astype(np.int64)
    high = np.minimum(low + 1, in_size - 1)
    frac = src - low
    return [(low, 1.0 - frac), (high, frac)]


def _area_matrix(in_size, out_size):
    """``area`` (adaptive average pooling): output i averages inputs [floor(i n / m), ceil((i + 1) n / m))."""
    weights = np.zeros((out_size, in_size))
    for i in range(out_size):
        start, end = (i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)
        weights[i, start:end] = 1.0 / (end - start)
    return weights


def _resize_dim(x, dim, out_size, mode, scale_factor, align_corners):
    from .._tensor import Tensor

    in_size = x.shape[dim]
    if mode == "area":
        weights = Tensor._make(_area_matrix(in_size, out_size).T.astype(x._data.dtype))
        return (x.movedim(dim, -1) @ weights).movedim(-1, dim)
    scale = _scale(in_size, out_size, scale_factor, align_corners)
    shape = [1] * x.ndim
    shape[dim] = out_size
    out = None
    for index, weight in _positions(mode, in_size, out_size, scale, align_corners):
        part = x.index_select(dim, Tensor._make(index))
        if weight is not None:
            part = part * Tensor._make(weight.astype(x._data.dtype).reshape(shape))
        out = part if out is None else out + part
    return out


def _sizes_error(in_sizes, out_sizes):
    """PyTorch's message for an empty or negative input or output size."""
    names = "DHW"[-len(in_sizes):]
    listed = [", ".join(f"{n}: {s}" for n, s in zip(names, sizes)) for sizes in (in_sizes, out_sizes)]
    joint = " and output" if len(in_sizes) == 1 else " output"  # PyTorch words the 1-D case so
    return f"Input and output sizes should be greater than 0, but got input ({listed[0]}){joint} ({listed[1]})"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of (N, C, *spatial) to ``size`` or by ``scale_factor``.

    Modes: ``nearest``, ``nearest-exact``, ``area``, ``linear`` (3-D input), ``bilinear``
    and ``bicubic`` (4-D), ``trilinear`` (5-D); ``align_corners`` maps the corner
    pixels' centres onto each other.
    """
    if mode == "lanczos":
        raise NotImplementedError("edutorch's interpolate has no 'lanczos' mode")
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                  f"area | nearest-exact (got {mode})")
    if align_corners is not None and mode not in _INTERPOLATING:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("edutorch's interpolate has no anti-aliasing (antialias=True)")
    spatial = input.ndim - 2
    if mode in _INTERPOLATING and _MODES[mode] != spatial:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_MODES[mode] + 2}D input")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    if size is not None:
        sizes = [size] * spatial if isinstance(size, int) else list(size)
        factors = [None] * spatial
    else:
        factors = [scale_factor] * spatial if not isinstance(scale_factor, (list, tuple)) else list(scale_factor)
        sizes = [int(math.floor(n * f)) for n, f in zip(input.shape[2:], factors)]
        if recompute_scale_factor:
            factors = [None] * spatial
    if mode != "area" and min(list(sizes) + list(input.shape[2:])) <= 0:
        raise RuntimeError(_sizes_error(input.shape[2:], sizes))
    out = input
    for d, (n, f) in enumerate(zip(sizes, factors)):
        out = _resize_dim(out, 2 + d, n, mode, f, bool(align_corners))
    return out
