"""``torch.optim.RAdam``: Adam whose adaptive step is switched on gradually (Liu et al., 2019).

For each parameter (PyTorch's ``_single_tensor_radam``, same order)::

    step += 1
    g = -g                                         if maximize
    p = p * (1 - lr * weight_decay)                if decoupled_weight_decay
    g = g + weight_decay * p                       elif weight_decay != 0
    m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1**step)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * beta2**step / (1 - beta2**step)
    if rho_t > 5:   (the variance of the adaptive rate is tractable)
        r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        p = p - lr * m_hat * r * sqrt(1 - beta2**step) / (sqrt(v) + eps)
    else:           (plain momentum SGD)
        p = p - lr * m_hat
"""
from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _lazy_state, _params_with_grad,
                        _step_gradient, _update_moments, _use_step_hooks)


class RAdam(Optimizer):
    """Rectified Adam; ``decoupled_weight_decay=True`` gives RAdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_arguments(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable}
        super().__init__(params, defaults)

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            state = _lazy_state(self, p, ("exp_avg", "exp_avg_sq"))
            radam_update(p, p.grad, state, betas=group["betas"], lr=group["lr"], eps=group["eps"],
                         weight_decay=group["weight_decay"],
                         decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        return loss


def radam_update(param, grad, state, *, betas, lr, eps, weight_decay, decoupled_weight_decay, maximize):
    """One RAdam step for one parameter, in place (``param`` and the tensors in ``state``)."""
    beta1, beta2 = betas
    exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    step_t += 1
    step = step_t.item()
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize,
                          decoupled_weight_decay=decoupled_weight_decay)
    _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    bias_corrected_exp_avg = exp_avg / bias_correction1  # the first moment without its bias
    rho_inf = 2 / (1 - beta2) - 1  # the longest the approximated SMA can be
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2  # its length now
    if rho_t > 5.0:  # the variance of the adaptive rate is tractable: rectify it
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
        param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
    else:  # plain SGD with momentum
        param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
