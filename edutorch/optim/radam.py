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
import numpy as np

from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _full_like, _scalar_state,
                        _use_step_hooks)


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
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_state()
                    state["exp_avg"] = _full_like(p, 0)
                    state["exp_avg_sq"] = _full_like(p, 0)
                state["step"]._data += 1
                step = float(state["step"]._data)
                grad = -p._grad._data if group["maximize"] else p._grad._data
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p._data *= 1 - lr * wd
                    else:
                        grad = grad + wd * p._data
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                bias_correction2 = 1 - beta2 ** step
                m_hat = exp_avg / (1 - beta1 ** step)
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = bias_correction2 ** 0.5 / (np.sqrt(exp_avg_sq) + group["eps"])
                    p._data -= m_hat * lr * adaptive * rect
                else:
                    p._data -= m_hat * lr
                p._version_counter[0] += 1
        return loss
