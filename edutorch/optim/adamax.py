"""``torch.optim.Adamax``: Adam with the infinity norm in place of the second moment.

For each parameter (PyTorch's ``_single_tensor_adamax``, same order)::

    step += 1
    g = -g                                       if maximize
    g = g + weight_decay * p                     if weight_decay != 0
    m = m + (1 - beta1) * (g - m)                # exp_avg.lerp_(g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)                # exp_inf
    p = p - lr / (1 - beta1**step) * m / u
"""
import numpy as np

from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _full_like, _scalar_state,
                        _use_step_hooks)


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
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_state()
                    state["exp_avg"] = _full_like(p, 0)
                    state["exp_inf"] = _full_like(p, 0)
                state["step"]._data += 1
                grad = -p._grad._data if group["maximize"] else p._grad._data
                if group["weight_decay"] != 0:
                    grad = grad + group["weight_decay"] * p._data
                exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)
                np.maximum(exp_inf * beta2, np.abs(grad) + group["eps"], out=exp_inf)
                clr = group["lr"] / (1 - beta1 ** float(state["step"]._data))
                p._data += -clr * exp_avg / exp_inf
                p._version_counter[0] += 1
        return loss
