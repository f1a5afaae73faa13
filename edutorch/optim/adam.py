"""``torch.optim.Adam``: adaptive moment estimation (Kingma & Ba, 2014).

For each parameter (PyTorch's ``_single_tensor_adam``, same order)::

    step += 1
    g = -g                                         if maximize
    p = p * (1 - lr * weight_decay)                if decoupled (AdamW)
    g = g + weight_decay * p                       elif weight_decay != 0
    m = m + (1 - beta1) * (g - m)                  # exp_avg.lerp_(g, 1 - beta1)
    v = beta2 * v + (1 - beta2) * g * g            # exp_avg_sq
    v_max = max(v_max, v)                          if amsgrad (and use v_max below)
    denom = sqrt(v) / sqrt(1 - beta2**step) + eps
    p = p - lr / (1 - beta1**step) * m / denom

``state[p]`` holds ``step`` (a float32 0-d tensor), ``exp_avg``,
``exp_avg_sq`` and, with amsgrad, ``max_exp_avg_sq``.
"""
from .. import maximum
from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _lazy_state, _params_with_grad,
                        _step_gradient, _use_step_hooks)


class Adam(Optimizer):
    """Adam; ``decoupled_weight_decay=True`` makes it AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_adam_arguments(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            # lazy state: made on the first step a parameter has a gradient
            buffers = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
            beta1, beta2 = group["betas"]
            adam_update(p, p.grad, _lazy_state(self, p, buffers), amsgrad=group["amsgrad"], beta1=beta1,
                        beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                        maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam_update(param, grad, state, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    """One Adam step for one parameter, in place (``param`` and the tensors in ``state``)."""
    exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    step_t += 1
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize,
                          decoupled_weight_decay=decoupled_weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)  # the running averages nadam/radam share (optimizer._update_moments)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step = step_t.item()
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    if amsgrad:
        max_exp_avg_sq = state["max_exp_avg_sq"]  # the largest second moment seen so far
        max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-step_size)
