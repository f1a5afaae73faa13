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
import numpy as np

from .optimizer import Optimizer, _evaluate_closure, _full_like, _scalar_state, _use_step_hooks


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
        for group in self.param_groups:
            rho, eps, lr = group["rho"], group["eps"], group["lr"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _scalar_state()
                    state["square_avg"] = _full_like(p, 0)
                    state["acc_delta"] = _full_like(p, 0)
                state["step"]._data += 1
                grad = -p._grad._data if group["maximize"] else p._grad._data
                if group["weight_decay"] != 0:
                    grad = grad + group["weight_decay"] * p._data
                square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
                square_avg *= rho
                square_avg += (1 - rho) * grad * grad
                delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * grad
                acc_delta *= rho
                acc_delta += (1 - rho) * delta * delta
                p._data -= lr * delta
                p._version_counter[0] += 1
        return loss
