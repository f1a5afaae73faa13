"""``replicate``: a copy of a module per device, whose parameters are differentiable copies.

A replica shares nothing with the original but its structure: each parameter
and buffer is ``tensor.to(device)``, a recorded op, so the gradients of the
replicas' losses flow back into the original module's parameters (PyTorch
broadcasts them with its ``Broadcast`` autograd function).
"""
import copy


def _replica(module, device, memo):
    """A shallow copy of ``module`` (and of its submodules) holding copies of its tensors on ``device``."""
    if id(module) in memo:  # a submodule used twice stays one module
        return memo[id(module)]
    replica = copy.copy(module)
    memo[id(module)] = replica
    replica.__dict__["_parameters"] = {k: None if p is None else p.to(device) for k, p in module._parameters.items()}
    replica.__dict__["_buffers"] = {k: None if b is None else b.to(device) for k, b in module._buffers.items()}
    replica.__dict__["_modules"] = {k: None if m is None else _replica(m, device, memo)
                                    for k, m in module._modules.items()}
    return replica


def replicate(network, devices, detach=False):
    """One replica of ``network`` per device (``detach=True``: replicas outside the graph)."""
    from .scatter_gather import _cuda

    replicas = []
    for d in devices:
        replica = _replica(network, _cuda(d), {})
        if detach:
            for table in ("_parameters", "_buffers"):
                for m in replica.modules():
                    m.__dict__[table] = {k: None if t is None else t.detach() for k, t in m.__dict__[table].items()}
        replicas.append(replica)
    return replicas
