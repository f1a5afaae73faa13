"""``torch.optim.Adamax``: Adam with the infinity norm in place of the second moment.

For each parameter (PyTorch's ``_single_tensor_adamax``, same order)::

    step += 1
    g = -g                                       if maximize
    g = g + weight_decay * p                     if weight_decay != 0
    m = m + (1 - beta1) * (g - m)                # exp_avg.lerp_(g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)                # exp_inf
    p = p - lr / (1 - beta1**step) * m / u
"""
from .. import maximum
from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _lazy_state, _params_with_grad,
                        _step_gradient, _use_step_hooks)


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2014, section 7)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_adam_arguments(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            state = _lazy_state(self, p, ("exp_avg", "exp_inf"))
            adamax_update(p, p.grad, state, betas=group["betas"], lr=group["lr"], eps=group["eps"],
                          weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adamax_update(param, grad, state, *, betas, lr, eps, weight_decay, maximize):
    """One Adamax step for one parameter, in place (``param`` and the tensors in ``state``)."""
    beta1, beta2 = betas
    exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
    step_t += 1
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
    clr = lr / (1 - beta1 ** step_t.item())
    param.addcdiv_(exp_avg, exp_inf, value=-clr)
