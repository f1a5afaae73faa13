"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

PyTorch keeps one thread-local flag, "is grad mode enabled?".  When it is off,
operations do not record a backward graph (``Function.apply`` takes a fast
path).  Each context manager here saves the flag, sets it, and restores it on
exit; each can also be used as a decorator, as in PyTorch.
"""
import functools

_state = {"enabled": True, "inference": False}


def is_grad_enabled():
    """True when operations record a graph for autograd (``torch.is_grad_enabled``)."""
    return _state["enabled"]


def call_with_grad_mode(enabled, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with grad mode set to ``enabled``, restored afterwards.

    What ``with torch.set_grad_enabled(enabled): fn(...)`` does, as one call:
    ``Function.apply`` runs every op's ``forward`` this way (with grad mode
    off), so it must cost little, and costs nothing more when the mode is
    already the one asked for (every op of a plain backward).
    """
    previous = _state["enabled"]
    if previous == enabled:
        return fn(*args, **kwargs)
    _state["enabled"] = enabled
    try:
        return fn(*args, **kwargs)
    finally:
        _state["enabled"] = previous


def is_inference_mode_enabled():
    """True inside ``inference_mode()`` (``torch.is_inference_mode_enabled``)."""
    return _state["inference"]


class _GradModeContext:
    """Base of the grad-mode context managers: save the flag, set it, restore it."""

    def __enter__(self):
        self._saved = dict(_state)
        self._set()
        return None

    def __exit__(self, *exc_info):
        _state.update(self._saved)
        return False

    def __call__(self, func):
        """Use the context manager as a decorator: ``@torch.no_grad()``."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_GradModeContext):
    """Disable graph recording, e.g. for evaluation or in-place weight updates."""

    def __new__(cls, orig_func=None):
        # ``@torch.no_grad`` (without parentheses) also works in PyTorch 2.x.
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def _set(self):
        _state["enabled"] = False


class enable_grad(_GradModeContext):
    """Re-enable graph recording inside a ``no_grad`` block."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def _set(self):
        _state["enabled"] = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode on or off; works as a function call, a context manager or a decorator."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._saved = dict(_state)  # what ``__exit__`` restores: the mode before the call
        _state["enabled"] = self.mode  # like PyTorch, calling it sets the mode at once

    def __enter__(self):
        return None  # the mode was already set by the call itself

    def _set(self):
        _state["enabled"] = self.mode

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        _state.update(self._saved)  # used as a decorator: undo the eager set
        return super().__call__(func)


class InferenceVersionCounter(list):
    """The version counter of an *inference tensor* (one made inside ``inference_mode``).

    PyTorch's inference tensors track no version and may never enter autograd: they
    cannot be saved for backward, nor changed in place outside inference mode.  Its
    type is the mark (``Tensor.is_inference()``); views share it, as they share the counter.
    """

    __slots__ = ()


INFERENCE_SAVED_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


def check_inplace_allowed(t):
    """PyTorch's refusal of an in-place op on an inference tensor outside inference mode."""
    if type(t._version_counter) is InferenceVersionCounter and not _state["inference"]:
        raise RuntimeError(INFERENCE_INPLACE_ERROR)


class inference_mode(_GradModeContext):
    """Like ``no_grad``, and tensors made inside are marked as inference tensors."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        obj = super().__new__(cls)
        if callable(mode):  # used as ``@torch.inference_mode`` without parentheses
            obj.mode = True
            return obj(mode)
        return obj

    def _set(self):
        if self.mode:
            _state["enabled"] = False
            _state["inference"] = True

    def clone(self):
        return self.__class__(self.mode)
