"""``torch.nn.utils.clip_grad_norm_`` and ``clip_grad_value_``: tame exploding gradients.

``clip_grad_norm_`` treats all the gradients as one long vector: it computes
its norm (the norm of the per-parameter norms) and, when that is above
``max_norm``, scales every gradient by ``max_norm / (total_norm + 1e-6)``.
The direction of the update is kept, only its length shrinks.

``clip_grad_value_`` clamps each gradient entry into ``[-clip_value, clip_value]``.
Both work in place on ``p.grad``, outside autograd, as in PyTorch.
"""
import types
import warnings

import numpy as np

from ... import linalg, stack, tensor
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _grads_of(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all ``tensors`` seen as one vector (the norm of their norms): a 0-d tensor."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensor(0.0)
    norms = [linalg.vector_norm(t, norm_type) for t in tensors]
    total_norm = linalg.vector_norm(stack([norm.to(tensors[0].device) for norm in norms]), norm_type)
    if error_if_nonfinite and (total_norm.isnan() or total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`"
        )
    return total_norm


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every gradient by ``min(1, max_norm / (total_norm + 1e-6))``, in place."""
    grads = _grads_of(parameters)
    if not grads:
        return
    clip_coef = max_norm / (total_norm + 1e-6)  # a 0-d tensor in the norm's dtype, like PyTorch
    clip_coef_clamped = clip_coef.clamp(max=1.0)
    with np.errstate(invalid="ignore"):  # inf * 0 = nan, silently, as in PyTorch
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients' total norm to ``max_norm``; return the norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = _grads_of(parameters)
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated spelling of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient entry into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads_of(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
