"""``torch.optim.RMSprop``: divide the gradient by a running RMS of its size (Hinton).

For each parameter (PyTorch's ``_single_tensor_rmsprop``, same order)::

    step += 1
    g = -g                                      if maximize
    g = g + weight_decay * p                    if weight_decay != 0
    v = alpha * v + (1 - alpha) * g * g         # square_avg
    avg = sqrt(v - m * m) + eps  with  m = m + (1 - alpha) * (g - m)   if centered
    avg = sqrt(v) + eps                                                otherwise
    buf = momentum * buf + g / avg;  p = p - lr * buf                  if momentum > 0
    p = p - lr * g / avg                                               otherwise
"""
from .optimizer import (Optimizer, _evaluate_closure, _lazy_state, _params_with_grad, _step_gradient,
                        _use_step_hooks)


class RMSprop(Optimizer):
    """RMSprop, optionally centered and with momentum."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            buffers = ("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ()) \
                + (("grad_avg",) if group["centered"] else ())
            rmsprop_update(p, p.grad, _lazy_state(self, p, buffers), lr=group["lr"], alpha=group["alpha"],
                           eps=group["eps"], weight_decay=group["weight_decay"], momentum=group["momentum"],
                           centered=group["centered"], maximize=group["maximize"])
        return loss


def rmsprop_update(param, grad, state, *, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    """One RMSprop step for one parameter, in place (``param`` and the tensors in ``state``)."""
    square_avg = state["square_avg"]
    state["step"] += 1
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize)
    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    if centered:  # subtract the squared mean: an estimate of the variance
        grad_avg = state["grad_avg"]
        grad_avg.lerp_(grad, 1 - alpha)
        avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
    else:
        avg = square_avg.sqrt()
    avg = avg.add_(eps)
    if momentum > 0:
        buf = state["momentum_buffer"]
        buf.mul_(momentum).addcdiv_(grad, avg)
        param.add_(buf, alpha=-lr)
    else:
        param.addcdiv_(grad, avg, value=-lr)
