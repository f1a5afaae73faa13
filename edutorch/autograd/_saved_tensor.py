"""Saved tensors: PyTorch's ``SavedVariable``, and the hooks that may pack them.

A graph node keeps some values for its backward (``ctx.save_for_backward``, or
what a built-in op saves, e.g. ``exp`` its result), each as one
:class:`SavedVariable`.  Normally that keeps the tensor itself and checks its
version when backward reads it.  Inside
``torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)`` it keeps
``pack_hook(tensor)`` instead, anything the hook returns, and calls
``unpack_hook(packed)`` each time the tensor is read (``ctx.saved_tensors``).

This module holds the hook stack (only the innermost pair applies), the
"disabled" switch and :class:`SavedVariable`.  ``function.py`` makes one per
saved value (``Node._pack_saved``) and unpacks it where ``saved_tensors`` reads
it; the non-reentrant checkpoint keeps its inputs as ``SavedVariable(tensor)``
too, outside any node.  It also keeps the id of the running backward pass
(``torch._C._current_graph_task_id``), which that checkpoint uses to
recompute once per backward pass.
"""
import itertools
import re
import weakref

from . import function as _function, grad_mode

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
DETACHED_ERROR = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
    "supported, please use out-of-place `.detach()` instead"
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


# -- the saved variable --------------------------------------------------------------
class SavedVariable:
    """One tensor a graph node keeps for its backward (PyTorch's ``SavedVariable``).

    What ``ctx.save_for_backward(a, b)`` turns each tensor into (``None`` and
    numbers are kept as they are), and what ``ctx.saved_tensors`` unpacks again.
    Its fields:

    * ``data``: the saved tensor itself; for a saved *output* only its array
      (the output's ``grad_fn`` is the node, and a node holding its own output
      would keep itself alive); under saved-tensor hooks, whatever
      ``pack_hook`` returned;
    * ``version_counter`` and ``version``: the tensor's version counter and its
      value when it was saved.  Unpacking compares them: a tensor modified in
      place since the forward raises PyTorch's error instead of giving a wrong
      gradient.  ``None`` for a hooked tensor (the hooks may keep a copy);
    * ``is_output`` and ``output_nr``: a saved output comes back as a new Tensor
      on the same data whose ``grad_fn`` is the node;
    * ``unpack_hook``, with ``requires_grad``, ``grad_fn`` and ``accumulator``:
      set when hooks packed the tensor; the unpacked tensor gets back the saved
      one's place in the graph.

    Only autograd makes and changes these: the node when it packs what
    ``forward`` saved (``Node._pack_saved``), ``grad_fn._raw_saved_<name>.register_hooks``
    (a new one, with the hooks given), and an in-place op whose saved result is
    now another tensor (:meth:`now_tracks`, through ``function.saved_output_now_is``).
    """

    # the usual case, as class defaults: a tensor saved without hooks, not an output
    is_output = False
    unpack_hook = None
    _view_node = None  # (weak reference to a view's node, its output number): ``now_tracks``
    _fw_grad = None  # a saved output's tangent (forward-mode AD), given by ``forward_ad``

    def __init__(self, tensor, node=None, hooks=None):
        if type(tensor._version_counter) is grad_mode.InferenceVersionCounter:
            raise RuntimeError(grad_mode.INFERENCE_SAVED_ERROR)
        if hooks is None and _stack:  # inside saved_tensors_hooks: the innermost pair applies
            hooks = _stack[-1]
        if hooks is not None:
            self._pack(tensor, node, *hooks)
            return
        if node is not None and tensor._grad_fn is node:  # an output of this node
            self.is_output = True
            self.data = tensor._data
            self.output_nr = tensor._output_nr
        else:
            self.data = tensor
        self.version_counter = counter = tensor._version_counter
        self.version = counter[0]

    def now_tracks(self, tensor):
        """A saved output: track ``tensor``'s memory and version counter from now on
        (its version now is the saved one).  When ``tensor`` is a view written in place, PyTorch
        unpacks it with the view's node at that time (``AsStridedBackward0`` of its base's
        ``CopySlices``), held weakly as PyTorch holds it: a second-order gradient then reaches
        the base's node, as it reaches the tensor's own node when it is no view."""
        self.data = tensor._data
        self.version_counter = tensor._version_counter
        self.version = tensor._version_counter[0]
        if "_view_of" in tensor.__dict__ and tensor._grad_fn is not None:
            self._view_node = weakref.ref(tensor._grad_fn), tensor._output_nr

    # -- saved-tensor hooks --------------------------------------------------------
    def _pack(self, tensor, node, pack_hook, unpack_hook):
        """Keep ``pack_hook(tensor)`` (called under no_grad, as PyTorch packs) and what rebuilding needs."""
        version = tensor._version_counter[0]
        self.data = grad_mode.call_with_grad_mode(False, pack_hook, tensor)
        if tensor._version_counter[0] != version:
            raise RuntimeError(PACK_INPLACE_ERROR)
        self.unpack_hook = unpack_hook
        self.version_counter = None
        self.requires_grad = tensor._requires_grad
        self.output_nr = tensor._output_nr
        # a saved output does not keep its own node (the node would keep itself alive)
        self.is_output = node is not None and tensor._grad_fn is node
        self.grad_fn = None if self.is_output else tensor._grad_fn
        self.accumulator = tensor._accumulator if tensor._grad_fn is None else None

    # -- unpacking -----------------------------------------------------------------
    def unpack(self, node=None, check_version=True):
        """The saved value as backward reads it, after the version check (``SavedVariable::unpack``)."""
        counter = self.version_counter
        if check_version and counter is not None and counter[0] != self.version:
            raise RuntimeError(self.inplace_error(node))
        if self.unpack_hook is not None:
            return self._unpack_hooked(node)
        if self.is_output:  # rebuild the output, pointing at its node (or at the node of the view it was written into)
            fn, nr = node, self.output_nr
            if self._view_node is not None and self._view_node[0]() is not None:
                fn, nr = self._view_node[0](), self._view_node[1]
            output = _function._Tensor._make(self.data, True, fn, nr, self.version_counter)
            if self._fw_grad is not None:  # a backward run under forward AD sees the output's tangent
                _function._dual.set_tangent(output, self._fw_grad)
            return output
        if self.data._grad_fn is None and node is not None and _detached_since(self.data, node):
            raise RuntimeError(DETACHED_ERROR)
        return self.data

    def _unpack_hooked(self, node):
        """``unpack_hook(packed)``, rebuilt as the tensor ``node`` saved."""
        data = self.unpack_hook(self.data)
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

    def inplace_error(self, node):
        """PyTorch's message for a saved tensor that was modified in place since it was saved."""
        if self.is_output:  # the node's own output: PyTorch names the node
            creator, nr, value = node, self.output_nr, _function._Tensor._make(self.data)
        else:
            value = self.data
            from .._tensor_methods.views import stale_no_grad_view_error

            # a view made under no_grad whose base was written: PyTorch, reading its graph, refuses it first
            message = stale_no_grad_view_error(value)
            if message is not None:
                return message
            if "_multi_view" in value.__dict__:
                # a split/unbind output whose base changed: PyTorch, regenerating the view's
                # node to unpack it, raises the multi-view error instead
                from .._tensor_methods.views import view_error

                return view_error(value, base_modified=True)
            creator, nr = value._grad_fn, value._output_nr
        # PyTorch 2.x prints the op's name: "Exp" for ExpBackward0, "MyFn" for MyFnBackward
        origin = f", which is output {nr} of {_forward_name(creator)}," if creator is not None else ""
        shape = ", ".join(str(s) for s in value.shape)
        kind = "CPUBoolType" if value._data.dtype.kind == "b" else value.type()  # PyTorch's name for bool
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{kind} [{shape}]]{origin} "
            f"is at version {self.version_counter[0]}; expected version {self.version} instead. Hint: "
            "enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )


def _detached_since(tensor, node):
    """Did ``detach_()`` take ``tensor``'s graph away after ``node`` saved it (with that graph)?"""
    return tensor.__dict__.get("_detached_in_place", -1) > node._sequence_nr


def _forward_name(node):
    """The op name PyTorch prints in version errors: ``ExpBackward0`` -> ``Exp``,
    ``PowBackward1`` -> ``Pow1``, ``MyFnBackward`` -> ``MyFn``."""
    return re.sub(r"Backward(0$)?", "", node.name())


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
