"""``torch.optim.Adadelta``: step sizes from running averages of squared gradients and updates.

For each parameter (PyTorch's ``_single_tensor_adadelta``, same order)::

    step += 1
    g = -g                                       if maximize
    g = g + weight_decay * p                     if weight_decay != 0
    v = rho * v + (1 - rho) * g * g              # square_avg
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta      # acc_delta
    p = p - lr * delta
"""
from .optimizer import (Optimizer, _evaluate_closure, _lazy_state, _params_with_grad, _step_gradient,
                        _use_step_hooks)


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            state = _lazy_state(self, p, ("square_avg", "acc_delta"))
            adadelta_update(p, p.grad, state, lr=group["lr"], rho=group["rho"], eps=group["eps"],
                            weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adadelta_update(param, grad, state, *, lr, rho, eps, weight_decay, maximize):
    """One Adadelta step for one parameter, in place (``param`` and the tensors in ``state``)."""
    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
    state["step"] += 1
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize)
    square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
    std = square_avg.add(eps).sqrt_()
    delta = acc_delta.add(eps).sqrt_()
    delta.div_(std).mul_(grad)
    acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
    param.add_(delta, alpha=-lr)
