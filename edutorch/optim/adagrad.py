"""``torch.optim.Adagrad``: per-coordinate step sizes from the sum of squared gradients.

For each parameter (PyTorch's ``_single_tensor_adagrad``, same order)::

    step += 1
    g = -g                                       if maximize
    g = g + weight_decay * p                     if weight_decay != 0
    clr = lr / (1 + (step - 1) * lr_decay)
    sum = sum + g * g
    p = p - clr * g / (sqrt(sum) + eps)

Unlike Adam, the state is made in ``__init__`` (``sum`` starts at
``initial_accumulator_value``), so ``state_dict()`` has it before any step.
"""
from .. import full_like
from .optimizer import (Optimizer, _evaluate_closure, _params_with_grad, _scalar_state, _step_gradient,
                        _use_step_hooks)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_state()
                state["sum"] = full_like(p, group["initial_accumulator_value"])

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            adagrad_update(p, p.grad, self.state[p], lr=group["lr"], lr_decay=group["lr_decay"],
                           eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adagrad_update(param, grad, state, *, lr, lr_decay, eps, weight_decay, maximize):
    """One Adagrad step for one parameter, in place (``param``, ``state["sum"]``, ``state["step"]``)."""
    state_sum, step_t = state["sum"], state["step"]
    step_t += 1
    step = step_t.item()
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize)
    clr = lr / (1 + (step - 1) * lr_decay)
    state_sum.addcmul_(grad, grad, value=1)
    std = state_sum.sqrt().add_(eps)
    param.addcdiv_(grad, std, value=-clr)
