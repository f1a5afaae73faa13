"""``torch.optim.SGD``: stochastic gradient descent, with momentum and Nesterov.

For each parameter ``p`` with gradient ``g`` (PyTorch's ``_single_tensor_sgd``,
same operations in the same order)::

    g = -g                                   if maximize
    g = g + weight_decay * p                 if weight_decay != 0
    buf = g  (first step)  or  buf = momentum * buf + (1 - dampening) * g
    g = g + momentum * buf  (nesterov)       or  g = buf
    p = p - lr * g

``step`` runs under ``no_grad`` (see ``optimizer._use_step_hooks``): the
in-place ops below are not recorded, and each bumps ``p``'s version counter.
"""
from .. import clone
from .optimizer import Optimizer, _evaluate_closure, _params_with_grad, _step_gradient, _use_step_hooks


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
            "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
            "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    @_use_step_hooks
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _evaluate_closure(closure)
        for p, group in _params_with_grad(self):
            # with momentum 0 there is no state at all, as in PyTorch
            state = self.state[p] if group["momentum"] != 0 else {}
            sgd_update(p, p.grad, state, lr=group["lr"], momentum=group["momentum"],
                       dampening=group["dampening"], weight_decay=group["weight_decay"],
                       nesterov=group["nesterov"], maximize=group["maximize"])
        return loss


def sgd_update(param, grad, state, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """One SGD step for one parameter, in place (``state`` keeps ``momentum_buffer``)."""
    grad = _step_gradient(param, grad, lr=lr, weight_decay=weight_decay, maximize=maximize)
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:  # the first step starts the running average at g
            buf = state["momentum_buffer"] = clone(grad).detach()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    param.add_(grad, alpha=-lr)
