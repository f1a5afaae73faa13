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
import numpy as np

from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _full_like, _scalar_state,
                        _use_step_hooks)


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

    def _init_state(self, p, amsgrad):
        """Lazy state: made on the first step a parameter has a gradient."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _scalar_state()
            state["exp_avg"] = _full_like(p, 0)
            state["exp_avg_sq"] = _full_like(p, 0)
            if amsgrad:
                state["max_exp_avg_sq"] = _full_like(p, 0)
        return state

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._init_state(p, group["amsgrad"])
                state["step"]._data += 1
                max_sq = state["max_exp_avg_sq"]._data if group["amsgrad"] else None
                adam_update(p._data, p._grad._data, state["exp_avg"]._data, state["exp_avg_sq"]._data,
                            max_sq, float(state["step"]._data), beta1=beta1, beta2=beta2,
                            lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                            maximize=group["maximize"],
                            decoupled_weight_decay=group["decoupled_weight_decay"])
                p._version_counter[0] += 1
        return loss


def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, beta1, beta2, lr,
                weight_decay, eps, maximize, decoupled_weight_decay):
    """Update ``param`` and the moment arrays in place (one Adam step)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            grad = grad + weight_decay * param
    exp_avg += (1 - beta1) * (grad - exp_avg)  # lerp towards g (PyTorch's form for weight < 0.5)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * grad * grad
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    if max_exp_avg_sq is not None:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = np.sqrt(max_exp_avg_sq) / bias_correction2_sqrt
    else:
        denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt
    denom += eps
    param += -step_size * exp_avg / denom  # addcdiv_: (value * m) / denom
