"""Saved tensors under hooks: PyTorch's ``SavedVariable`` when a hook pair is active.

A graph node keeps some tensors for its backward (``ctx.save_for_backward``, or
what a built-in op saves, e.g. ``exp`` its result).  Normally the node keeps the
tensor itself and checks its version when backward reads it.  Inside
``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)`` it keeps
``pack_hook(tensor)`` instead, anything the hook returns, and calls
``unpack_hook(packed)`` each time the tensor is read (``ctx.saved_tensors``).

This module holds the hook stack (only the innermost pair applies), the
"disabled" switch, and :class:`SavedTensor`, the packed entry.  ``function.py``
calls :func:`pack_all` where a node saves its tensors and
:meth:`SavedTensor.unpack` where ``saved_tensors`` reads them.  It also keeps
the id of the running backward pass (``torch._C._current_graph_task_id``), which
the non-reentrant checkpoint uses to recompute once per backward pass.
"""
import itertools

from . import function as _function, grad_mode

_state = grad_mode._state
_stack = []  # (pack_hook, unpack_hook) pairs; the innermost (last) one applies
_disabled = {"message": None}  # set by disable_saved_tensors_hooks(error_message)
_graph_task = {"id": -1, "whole_graph": True}  # the running backward pass; id -1 outside of backward
_graph_task_ids = itertools.count()

PACK_INPLACE_ERROR = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook."
)


# -- the hook stack -------------------------------------------------------------
def push_hooks(pack_hook, unpack_hook):
    """Make ``(pack_hook, unpack_hook)`` the active pair (``_push_saved_tensors_default_hooks``)."""
    _check_enabled()
    _stack.append((pack_hook, unpack_hook))


def pop_hooks():
    _stack.pop()


def _check_enabled():
    if _disabled["message"] is not None:
        raise RuntimeError(_disabled["message"])


def disable(message):
    """Refuse saved-tensor hooks from now on, with ``message`` as the error.

    As in PyTorch, disabling while a pair is active is itself the error.
    """
    if _stack:
        raise RuntimeError(message)
    _disabled["message"] = message


def enable():
    _disabled["message"] = None


def get_disabled_error_message():
    return _disabled["message"]


# -- packing and unpacking -------------------------------------------------------
class SavedTensor:
    """One saved tensor kept as ``pack_hook(tensor)``, plus what rebuilding it needs.

    PyTorch's ``SavedVariable`` with hooks: no version check when unpacked (the
    hooks may store anything), and the unpacked tensor gets back the saved one's
    place in the graph: its ``grad_fn`` (the node itself for a saved output) or,
    for a leaf, its ``requires_grad`` and the node that accumulates into ``.grad``.
    """

    __slots__ = ("packed", "unpack_hook", "requires_grad", "grad_fn", "output_nr", "is_output", "accumulator")

    def __init__(self, node, tensor, pack_hook, unpack_hook):
        version = tensor._version_counter[0]
        enabled = _state["enabled"]
        _state["enabled"] = False  # PyTorch packs under no_grad
        try:
            self.packed = pack_hook(tensor)
        finally:
            _state["enabled"] = enabled
        if tensor._version_counter[0] != version:
            raise RuntimeError(PACK_INPLACE_ERROR)
        self.unpack_hook = unpack_hook
        self.requires_grad = tensor._requires_grad
        self.output_nr = tensor._output_nr
        # a saved output does not keep its own node (the node would keep itself alive)
        self.is_output = node is not None and tensor.grad_fn is node
        self.grad_fn = None if self.is_output else tensor.grad_fn
        self.accumulator = tensor._accumulator if tensor.grad_fn is None else None

    def unpack(self, node):
        """``unpack_hook(packed)``, rebuilt as the tensor ``node`` saved."""
        data = self.unpack_hook(self.packed)
        Tensor = _function._Tensor
        if not isinstance(data, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                f"{type(data).__name__}"
            )
        grad_fn = node if self.is_output else self.grad_fn
        tensor = Tensor._make(data._data, self.requires_grad or grad_fn is not None, grad_fn,
                              self.output_nr, data._version_counter)
        if self.accumulator is not None:  # a leaf: gradients still reach the original's .grad
            tensor._accumulator = self.accumulator
        return tensor


def pack_all(node, saved):
    """``node``'s saved values as entries of ``Node._saved``, tensors packed by the active hook.

    The entries have the shape ``(value, version_counter, version)`` that
    ``Node`` expects, with no version counter: hooked tensors are not version-checked.
    """
    pack_hook, unpack_hook = _stack[-1]
    Tensor = _function._Tensor
    return [
        (SavedTensor(node, t, pack_hook, unpack_hook) if isinstance(t, Tensor) else t, None, -1)
        for t in saved
    ]


class SavedInput:
    """A tensor saved outside of any node (``torch._C._autograd._make_saved_tensor``).

    The non-reentrant checkpoint keeps its inputs this way: like any saved
    tensor, packed by the active hooks if there are some, otherwise kept
    with its version and checked for in-place changes when unpacked.
    """

    def __init__(self, tensor):
        self.hooked = SavedTensor(None, tensor, *_stack[-1]) if _stack else None
        self.tensor = None if _stack else tensor
        self.version = tensor._version_counter[0]

    def unpack(self):
        if self.hooked is not None:
            return self.hooked.unpack(None)
        t = self.tensor
        if t._version_counter[0] != self.version:
            # the same message as a node's saved input (Node._inplace_error does not use the node for it)
            raise RuntimeError(_function.Node._inplace_error(None, (t, t._version_counter, self.version)))
        return t


save = SavedInput


# -- the running backward pass -----------------------------------------------------
def enter_graph_task(whole_graph):
    """Called by the engine when a backward pass starts; returns the previous state to restore.

    ``whole_graph`` is False for ``autograd.grad`` and ``backward(inputs=...)``,
    which run only part of the graph.
    """
    previous = _graph_task["id"], _graph_task["whole_graph"]
    _graph_task["id"], _graph_task["whole_graph"] = next(_graph_task_ids), whole_graph
    return previous


def exit_graph_task(previous):
    _graph_task["id"], _graph_task["whole_graph"] = previous


def is_checkpoint_valid():
    """False inside ``autograd.grad`` / ``backward(inputs=...)`` (``torch.autograd._is_checkpoint_valid``):
    there the reentrant checkpoint's inner ``backward`` would accumulate into every leaf."""
    return _graph_task["whole_graph"]


def current_graph_task_id():
    """The id of the running backward pass, -1 outside one (``torch._C._current_graph_task_id``)."""
    return _graph_task["id"]
