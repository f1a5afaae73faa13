"""``torch.optim.NAdam``: Adam with Nesterov momentum (Dozat, 2016).

For each parameter (PyTorch's ``_single_tensor_nadam``, same order)::

    step += 1
    g = -g                                         if maximize
    p = p * (1 - lr * weight_decay)                if decoupled_weight_decay
    g = g + weight_decay * p                       elif weight_decay != 0
    mu      = beta1 * (1 - 0.5 * 0.96**(step * momentum_decay))
    mu_next = beta1 * (1 - 0.5 * 0.96**((step + 1) * momentum_decay))
    mu_product = mu_product * mu
    m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(v / (1 - beta2**step)) + eps
    p = p - lr * (1 - mu) / (1 - mu_product) * g / denom
          - lr * mu_next / (1 - mu_product * mu_next) * m / denom
"""
import numpy as np

from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _full_like, _scalar_state,
                        _use_step_hooks)


class NAdam(Optimizer):
    """NAdam; ``decoupled_weight_decay=True`` gives NAdamW."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_arguments(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
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
                    state["mu_product"] = _scalar_state(1.0)  # float32, as PyTorch keeps it
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
                decay = group["momentum_decay"]
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
                state["mu_product"]._data *= np.float32(mu)
                mu_product = float(state["mu_product"]._data)
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg += (1 - beta1) * (grad - exp_avg)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                denom = np.sqrt(exp_avg_sq / (1 - beta2 ** step)) + group["eps"]
                p._data += (-lr * (1.0 - mu) / (1.0 - mu_product)) * grad / denom
                p._data += (-lr * mu_next / (1.0 - mu_product * mu_next)) * exp_avg / denom
                p._version_counter[0] += 1
        return loss
