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
from .optimizer import (Optimizer, _check_adam_arguments, _evaluate_closure, _lazy_state, _params_with_grad,
                        _step_gradient, _update_moments, _use_step_hooks)


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
        for p, group in _params_with_grad(self):
            # mu_product stays a float32 0-d tensor, as PyTorch keeps it
            state = _lazy_state(self, p, ("exp_avg", "exp_avg_sq"), mu_product=1.0)
            nadam_update(p, p.grad, state, betas=group["betas"], lr=group["lr"], eps=group["eps"],
                         weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                         decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
        return loss


def nadam_update(param, grad, state, *, betas, lr, eps, weight_decay, momentum_decay, decoupled_weight_decay,
                 maximize):
    """One NAdam step for one parameter, in place (``param`` and the tensors in ``state``)."""
    beta1, beta2 = betas
    exp_avg, exp_avg_sq, mu_product, step_t = (state["exp_avg"], state["exp_avg_sq"], state["mu_product"],
                                               state["step"])
    step_t += 1
    step = step_t.item()
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize,
                          decoupled_weight_decay=decoupled_weight_decay)
    bias_correction2 = 1 - beta2**step
    # the momentum cache mu_t and mu_{t+1}
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    mu_product *= mu
    _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
    denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
    mu_product_next = mu_product.item() * mu_next
    param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product.item())))
    param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
