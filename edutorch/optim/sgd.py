"""``torch.optim.SGD``: stochastic gradient descent, with momentum and Nesterov.

For each parameter ``p`` with gradient ``g`` (PyTorch's ``_single_tensor_sgd``,
same operations in the same order)::

    g = -g                                   if maximize
    g = g + weight_decay * p                 if weight_decay != 0
    buf = g  (first step)  or  buf = momentum * buf + (1 - dampening) * g
    g = g + momentum * buf  (nesterov)       or  g = buf
    p = p - lr * g

The arithmetic is NumPy on ``p._data``, in place: the update is not recorded
by autograd, and it bumps ``p``'s version counter like ``p.add_`` would.
"""
from .._tensor import Tensor
from .optimizer import Optimizer, _evaluate_closure, _use_step_hooks


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
        for group in self.param_groups:
            hyper = (group["lr"], group["momentum"], group["dampening"], group["weight_decay"],
                     group["nesterov"], group["maximize"])
            momentum = hyper[1]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if momentum == 0:  # no state at all, as in PyTorch
                    sgd_update(p._data, grad._data, None, *hyper)
                else:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:  # the first step creates the buffer
                        state["momentum_buffer"] = Tensor._make(sgd_update(p._data, grad._data, None, *hyper))
                    else:
                        sgd_update(p._data, grad._data, buf._data, *hyper)
                p._version_counter[0] += 1  # changed in place, like ``p.add_``
        return loss


def sgd_update(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """Update the array ``param`` in place; return the momentum buffer (new or updated)."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param
    if momentum != 0:
        if buf is None:
            buf = grad.copy()  # the first step starts the running average at g
        else:
            buf *= momentum
            if dampening == 0:
                buf += grad  # the same as adding (1 - 0) * grad, without the multiply
            else:
                buf += (1 - dampening) * grad
        grad = grad + momentum * buf if nesterov else buf
    param -= lr * grad
    return buf
