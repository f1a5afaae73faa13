"""``torch.amp``: automatic mixed precision.

* :class:`autocast` runs the ops of a region in a lower precision where that
  is safe (matrix products, convolutions) and in float32 where it is not
  (losses, ...): ``autocast_mode.py`` holds PyTorch's op lists per device.
* :class:`GradScaler` scales the loss so that small float16 gradients do not
  underflow to zero, and unscales them before the optimizer step.
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
