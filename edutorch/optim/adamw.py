"""``torch.optim.AdamW``: Adam with decoupled weight decay (Loshchilov & Hutter).

Instead of adding ``weight_decay * p`` to the gradient (which Adam then
rescales), AdamW shrinks the weights directly: ``p *= 1 - lr * weight_decay``.
As in PyTorch 2.x it is Adam with ``decoupled_weight_decay=True``.
"""
from .adam import Adam


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def load_state_dict(self, state_dict):
        """Loading keeps ``decoupled_weight_decay=True``, whatever the saved groups say."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
