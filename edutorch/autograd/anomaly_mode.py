"""``torch.autograd.detect_anomaly``: find the forward op behind a NaN in backward.

While anomaly mode is on, the Python stack of each op that records a node is
stored in ``node.metadata["traceback_"]``.  When backward fails inside a node
(an exception, or, with ``check_nan``, a gradient containing NaN), it warns
"Error detected in DivBackward0. Traceback of forward call that caused the
error: ..." with that stack, so the error points at the line of the student's
forward code, not at the engine.

Autograd does not know about this mode: while it is on, it registers two
interceptors (``function.Interceptors``), one around ``Function.apply``
(:func:`_remember_forward_stack`) and one around each node the engine runs
(:func:`_check_node`).
"""
import functools
import os
import traceback
import warnings

from . import engine, function
from .._dtype import is_floating as _is_floating

_state = {"enabled": False, "check_nan": True}
_LEVEL = 2  # inside the profiler's and autocast's interceptors: it looks at the node the op made
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled():
    """True while anomaly detection is on (``torch.is_anomaly_enabled``; PyTorch has the
    three functions here at the top level, ``torch.*``; edutorch also keeps them in ``autograd``)."""
    return _state["enabled"]


def is_anomaly_check_nan_enabled():
    """True when anomaly mode also checks backward outputs for NaN (``torch.is_anomaly_check_nan_enabled``)."""
    return _state["check_nan"]


def set_anomaly_enabled(enabled, check_nan=True):
    """Switch anomaly detection on or off (``torch.set_anomaly_enabled``; what the
    context managers below call)."""
    function.apply_interceptors.unregister(_remember_forward_stack)
    engine.node_interceptors.unregister(_check_node)
    _state["enabled"] = bool(enabled)
    _state["check_nan"] = bool(check_nan)
    if enabled:
        function.apply_interceptors.register(_remember_forward_stack, _LEVEL)
        engine.node_interceptors.register(_check_node, _LEVEL)


def _forward_stack():
    """The caller's stack as text, without the innermost edutorch frames (the op plumbing)."""
    frames = traceback.extract_stack()[:-1]
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    return "".join(traceback.format_list(frames))


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on.

    ``check_nan=True`` makes a NaN in any backward output an error:
    ``RuntimeError: Function 'DivBackward0' returned nan values in its 0th output.``
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        self.prev = (_state["enabled"], _state["check_nan"])
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc_info):
        set_anomaly_enabled(*self.prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a call, or as a context manager that restores it."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_state["enabled"], _state["check_nan"])
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        set_anomaly_enabled(*self.prev)
        return False


def _remember_forward_stack(proceed, cls, args, kwargs):
    """Interceptor of ``Function.apply``: keep the caller's stack in the node the op recorded."""
    outputs = proceed(cls, args, kwargs)
    for out in outputs if type(outputs) is tuple else (outputs,):
        node = getattr(out, "grad_fn", None)
        if node is not None and node._forward_cls is cls and "traceback_" not in node.metadata:
            node.metadata["traceback_"] = _forward_stack()
            break
    return outputs


def check_backward_output(node, grad_inputs):
    """With ``check_nan``: PyTorch's error when a node's backward returned NaN."""
    if not _state["check_nan"]:
        return
    for i, g in enumerate(grad_inputs):
        if g is not None and _is_floating(g._data.dtype) and bool((g._data != g._data).any()):  # NaN != NaN
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _check_node(proceed, node, grads):
    """Interceptor of the engine's step for one node: run it; if it fails, first warn
    with the node's forward traceback; with ``check_nan``, a NaN gradient is an error."""
    try:
        grad_inputs = proceed(node, grads)
        check_backward_output(node, grad_inputs)
        return grad_inputs
    except Exception:
        stack = node.__dict__.get("_metadata", {}).get("traceback_")
        if stack is not None:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{stack}",
                UserWarning,
                stacklevel=2,
            )
        else:
            warnings.warn(
                f"Error detected in {node.name()}. No forward pass information available. "
                "Enable detect anomaly during forward pass for more information.",
                UserWarning,
                stacklevel=2,
            )
        raise
