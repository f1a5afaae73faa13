"""Helpers shared by the layer Functions."""
import functools

from ...autograd.function import DelayedError, once_differentiable
from ...autograd.grad_mode import is_grad_enabled


def first_order_only(backward):
    """``@once_differentiable`` for a layer whose gradient depends on the layer's inputs.

    PyTorch can differentiate the backward of a convolution or a normalization
    again (``create_graph=True``); ours is NumPy code, so it cannot.
    ``once_differentiable`` marks the returned gradients only when an incoming
    gradient requires grad.  But ``dL/dx`` of a convolution also depends on the
    weight, and ``dL/dx`` of a normalization on ``x`` itself: so whenever a graph
    is being built, every returned gradient gets the ``Error`` node, and
    differentiating it again raises PyTorch's once_differentiable error instead
    of silently leaving those terms out.
    """
    plain = once_differentiable(backward)  # runs backward under no_grad

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        outputs = plain(ctx, *grads)
        if not is_grad_enabled() or any(g is not None and g.requires_grad for g in grads):
            return outputs  # no graph, or once_differentiable has marked them already
        marked = DelayedError.apply(*(None if o is None else o.detach().requires_grad_() for o in outputs))
        return marked if isinstance(marked, tuple) else (marked,)

    return wrapper
