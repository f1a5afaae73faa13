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
import numpy as np

from .optimizer import Optimizer, _evaluate_closure, _full_like, _scalar_state, _use_step_hooks


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

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state()
            state["square_avg"] = _full_like(p, 0)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _full_like(p, 0)
            if group["centered"]:
                state["grad_avg"] = _full_like(p, 0)
        return state

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._init_state(p, group)
                state["step"]._data += 1
                grad_avg = state["grad_avg"]._data if group["centered"] else None
                buf = state["momentum_buffer"]._data if group["momentum"] > 0 else None
                rmsprop_update(p._data, p._grad._data, state["square_avg"]._data, grad_avg, buf,
                               lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                               weight_decay=group["weight_decay"], momentum=group["momentum"],
                               maximize=group["maximize"])
                p._version_counter[0] += 1
        return loss


def rmsprop_update(param, grad, square_avg, grad_avg, momentum_buffer, *, lr, alpha, eps, weight_decay,
                   momentum, maximize):
    """Update ``param`` and the running averages in place (one RMSprop step)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param
    square_avg *= alpha
    square_avg += (1 - alpha) * grad * grad
    if grad_avg is not None:  # centered: subtract the squared mean, estimating the variance
        grad_avg += (1 - alpha) * (grad - grad_avg)
        avg = np.sqrt(square_avg - grad_avg * grad_avg)
    else:
        avg = np.sqrt(square_avg)
    avg += eps
    if momentum > 0:
        momentum_buffer *= momentum
        momentum_buffer += grad / avg
        param -= lr * momentum_buffer
    else:
        param += -lr * grad / avg
