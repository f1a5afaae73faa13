"""``torch.amp.GradScaler``: loss scaling, so small float16 gradients do not flush to zero.

float16 cannot hold magnitudes below about 6e-8: gradients that small become
0 in a float16 backward.  The scaler multiplies the loss by a large factor
``S`` (``scale(loss)``) so every gradient of the backward is ``S`` times
larger and stays representable, then divides the gradients of the
parameters by ``S`` again before the optimizer uses them (``unscale_``).

``S`` adapts: if any unscaled gradient is inf or NaN (``S`` was too large
and something overflowed), ``step`` skips the optimizer step and ``update``
multiplies ``S`` by ``backoff_factor`` (0.5); after ``growth_interval``
(2000) steps in a row without an overflow, ``update`` multiplies it by
``growth_factor`` (2.0).  The loop::

    scaler.scale(loss).backward()
    scaler.step(optimizer)     # unscale_ (unless done already), then step unless inf/NaN
    scaler.update()
"""
import warnings
from collections import defaultdict
from enum import Enum

import numpy as np

from .. import _dtype, backend
from ..autograd import function as _function
from ..autograd.grad_mode import no_grad

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    """Where an optimizer is in the current iteration: nothing yet, unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _is_tensor(value):
    return isinstance(value, _function._Tensor)  # edutorch.Tensor (imported late: it imports us)


def _full(value, dtype, device):
    """``torch.full((), value, dtype=dtype, device=device)``."""
    array = np.full((), value, dtype=dtype.np)
    return _function._Tensor._make(backend.to_device(array, device.type))


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """``torch._amp_foreach_non_finite_check_and_unscale_``: ``g *= inv_scale`` for each
    gradient, and ``found_inf = 1.0`` if any of them holds an inf or NaN."""
    inv = inv_scale._data.astype(np.float32)  # float16/bfloat16 gradients: multiplied in float32
    for g in grads:
        xp = backend.get_array_module(g._data)
        if not bool(xp.isfinite(g._data).all()):
            found_inf._data[...] = 1.0
        g._data[...] = g._data * inv
        g._version_counter[0] += 1


def _update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """``torch._amp_update_scale_``: back off after an overflow, grow after ``growth_interval`` clean steps."""
    if float(found_inf._data) > 0:
        scale._data[...] = scale._data * np.float32(backoff_factor)
        growth_tracker._data[...] = 0
        return
    successful = int(growth_tracker._data) + 1
    if successful == growth_interval:
        grown = scale._data * np.float32(growth_factor)
        if bool(np.isfinite(backend.to_device(grown, "cpu"))):  # never grow into inf
            scale._data[...] = grown
        successful = 0
    growth_tracker._data[...] = successful


class GradScaler:
    """``torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``.

    The scale lives in a float32 tensor on the loss's device, created by the
    first ``scale()``.  Each optimizer passes through the stages
    READY → UNSCALED → STEPPED once per iteration; ``update()`` resets them.
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not backend.cuda_is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # created by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, device):
        self._scale = _full(self._init_scale, _dtype.float32, device)
        self._growth_tracker = _full(self._init_growth_tracker, _dtype.int32, device)

    # -- the three calls of the loop ---------------------------------------------------
    def scale(self, outputs):
        """``outputs * scale``: a tensor, or every tensor in a (nested) list/tuple/iterable."""
        if not self._enabled:
            return outputs
        if _is_tensor(outputs):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply_scale(value):
            if _is_tensor(value):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(value.device)
                return value * self._scale.to(device=value.device)
            if hasattr(value, "__iter__"):
                scaled = map(apply_scale, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Unscale the gradients of ``optimizer``'s parameters, device by device; the found_inf per device."""
        per_device = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not _is_tensor(param):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    per_device[param.grad.device.type].append(param.grad)
            found = {}
            for device, grads in per_device.items():
                found[device] = found_inf.to(device=device)
                _non_finite_check_and_unscale_(grads, found[device], inv_scale.to(device=device))
        return found

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale (in place), e.g. before clipping them."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()  # the reciprocal in float64, as PyTorch
        found_inf = _full(0.0, _dtype.float32, self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``unscale_(optimizer)`` if not done yet, then ``optimizer.step()`` unless a gradient is inf/NaN.

        Returns what ``optimizer.step`` returned, or None when the step was skipped.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adapt the scale from this iteration's inf checks (or set ``new_scale``); start a new iteration."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=scale.device)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for other in found_infs[1:]:
                found_inf_combined = found_inf_combined + other
            _update_scale_(scale, growth_tracker, found_inf_combined, self._growth_factor,
                           self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # -- reading and setting the state ---------------------------------------------------
    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``scale``, the factors, the interval and ``_growth_tracker``; ``{}`` when disabled."""
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
