"""Weight normalization (``torch.nn.utils.weight_norm``), the hook-based version.

``w = g * v / ||v||``: the direction ``v`` and the length ``g`` of each output
row become two parameters, ``weight_v`` and ``weight_g`` (Salimans & Kingma,
https://arxiv.org/abs/1602.07868).  As with pruning, ``weight`` itself turns
into a plain attribute recomputed by a forward pre-hook.

``dim`` is the dimension that keeps its own norm (0: one norm per output
row).  ``dim=None`` (stored as ``-1``) means one norm for the whole tensor;
careful: here ``-1`` does *not* mean "the last dimension", as in PyTorch.
"""
import warnings

from ...autograd.function import Function
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_axes(ndim, dim):
    """The axes ``norm_except_dim`` reduces: all of them for ``dim=-1``, else all but ``dim``."""
    if dim == -1:
        return tuple(range(ndim))
    dim = dim % ndim
    return tuple(d for d in range(ndim) if d != dim)


def norm_except_dim(v, pow=2, dim=0):
    """``torch.norm_except_dim``: the ``pow``-norm over every axis except ``dim``.

    The result keeps size-1 axes (shape ``(out, 1, 1, ...)`` for ``dim=0``), so
    it broadcasts against ``v``; ``dim=-1`` gives one 0-d norm of everything.
    """
    axes = _norm_axes(v.dim(), dim)
    powered = v * v if pow == 2 else v.abs() ** pow
    return powered.sum(axes, keepdim=dim != -1) ** (1.0 / pow)


def _weight_norm(v, g, dim=0):
    """``torch._weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))``.

    For ``dim`` 0 or the last dimension PyTorch runs one fused kernel (its
    graph node is ``WeightNormInterfaceBackward0``); otherwise it composes
    ordinary ops, so the result's ``grad_fn`` is ``MulBackward0``.  We do the same.
    """
    if dim in (0, v.dim() - 1):
        return WeightNormInterface.apply(v, g, dim)
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNormInterface(Function):
    """The fused weight-norm op: ``w = v * g / ||v||`` with the norm over all axes but ``dim``."""

    _backward_name = "WeightNormInterfaceBackward0"
    _profiler_name = "aten::_weight_norm_interface"  # its torch.profiler event (not derived from the node name)

    @staticmethod
    def forward(ctx, v, g, dim):
        ctx.axes = _norm_axes(v.dim(), dim)
        ctx.save_for_backward(v, g)
        return v * (g / norm_except_dim(v, 2, dim))

    @staticmethod
    def backward(ctx, grad_w):
        # With n = ||v||:  dw/dg = v / n  and  dw/dv = (g / n) (I - v v^T / n^2),
        # each summed over the axes that share one norm.
        v, g = ctx.saved_tensors
        norm = (v * v).sum(ctx.axes, keepdim=True) ** 0.5
        dot = (grad_w * v).sum(ctx.axes, keepdim=True)  # <grad_w, v> per norm group
        grad_v = (g / norm) * (grad_w - v * (dot / (norm * norm)))
        grad_g = (dot / norm).reshape(g.shape)
        return grad_v, grad_g, None


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and install the hook."""
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated "
            "in favor of `torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        g = norm_except_dim(weight.detach(), 2, dim)
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Fold ``g`` and ``v`` back into one parameter ``<name>``."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Apply weight normalization to ``module.<name>``; returns the module.

    Deprecated in PyTorch (as here) in favour of
    :func:`edutorch.nn.utils.parametrizations.weight_norm`.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Remove the weight normalization of ``module.<name>``; returns the module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
