"""``torch.autograd.Function``: one op = a forward and a backward, linked by ``ctx``.

Every differentiable op in edutorch is a subclass of :class:`Function`, exactly
the class a student subclasses to write a custom op::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

``Exp.apply(x)`` runs ``forward`` with grad mode off and, when an input
requires grad, records a graph node.  As in PyTorch, the ``ctx`` object *is*
that node: ``y.grad_fn`` is an instance of the class ``ExpBackward`` made for
``Exp``, it keeps what ``forward`` saved, and ``next_functions`` points to the
nodes of the inputs.  The engine (``engine.py``) later calls ``backward`` on it.
"""
import itertools
import weakref

from . import grad_mode

_state = grad_mode._state
_sequence = itertools.count()
_Tensor = None  # edutorch.Tensor, set by edutorch/_tensor.py (it imports us)

FREED_GRAPH_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """What ``forward`` can tell ``backward`` (``torch.autograd.function.FunctionCtx``)."""

    _saved = ()
    _dirty = ()
    _non_differentiable = ()
    materialize_grads = True
    # Outside a recorded graph no input needs a gradient (enough entries for any op).
    needs_input_grad = (False,) * 16

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward``; their version is checked when unpacked."""
        self._saved = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that ``forward`` modified in place."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that never get a gradient (e.g. indices of ``max``)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """If False, ``backward`` may receive ``None`` for outputs that got no gradient."""
        self.materialize_grads = value


class Node(FunctionCtx):
    """A node of the backward graph (``torch.autograd.graph.Node``); also the ``ctx``.

    ``next_functions`` holds one ``(node, output_nr)`` edge per tensor input:
    the node that will receive this input's gradient, or ``None`` if the input
    does not require grad.  Leaves get an :class:`AccumulateGrad` node.
    """

    _forward_cls = None
    _released = False

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    # -- saved tensors ---------------------------------------------------
    def _pack_saved(self, outputs):
        """Record each saved tensor with its version (``SavedVariable`` in PyTorch).

        A saved *output* is stored without its ``grad_fn`` (it is this node), so
        the node and the tensor do not keep each other alive.
        """
        packed = []
        for t in self._saved:
            if t is None or not isinstance(t, _Tensor):
                packed.append((t, None, -1))
            elif t.grad_fn is self:
                packed.append((t.data, t._version_counter, t._version_counter[0], t._output_nr))
            else:
                packed.append((t, t._version_counter, t._version_counter[0]))
        self._saved = packed

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        if self._released:
            raise RuntimeError(FREED_GRAPH_ERROR)
        tensors = []
        for entry in self._saved:
            value, counter, version = entry[0], entry[1], entry[2]
            if counter is not None and counter[0] != version:
                creator = self if len(entry) == 4 else value.grad_fn
                raise RuntimeError(_inplace_error(value, creator, counter[0], version))
            if len(entry) == 4:  # a saved output: rebuild it, pointing at this node
                value = _Tensor._make(value, True, self, entry[3], counter)
            tensors.append(value)
        return tuple(tensors)

    def _release(self):
        """Free saved tensors after backward (unless ``retain_graph=True``)."""
        if self._saved:
            self._released = True
            self._saved = ()

    # -- hooks on the node -------------------------------------------------
    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node's backward; may return new grads."""
        return _add_hook(self.__dict__.setdefault("_node_pre_hooks", {}), fn)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward."""
        return _add_hook(self.__dict__.setdefault("_node_post_hooks", {}), fn)

    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})

    # -- backward ------------------------------------------------------------
    def apply(self, *grad_outputs):
        """Call the Function's ``backward`` and keep the grads of tensor inputs."""
        grads = self._forward_cls.backward(self, *grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        if len(grads) > self._num_inputs and all(g is None for g in grads[self._num_inputs:]):
            grads = grads[: self._num_inputs]  # PyTorch allows trailing Nones
        if len(grads) != self._num_inputs:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {self._num_inputs}, got {len(grads)})"
            )
        if self._tensor_positions is not None:
            grads = tuple(grads[i] for i in self._tensor_positions)
        return grads


class AccumulateGrad(Node):
    """The graph node of a leaf tensor: adds the incoming gradient into ``.grad``."""

    next_functions = ()
    _num_outputs = 1

    def __init__(self, variable):
        self.variable = variable
        self._sequence_nr = 2**62  # leaves run last, as in PyTorch (UINT64_MAX)

    def apply(self, grad):
        variable = self.variable
        if variable._grad is None:
            # A copy: the same gradient tensor may reach several leaves.
            variable._grad = grad.detach().clone() if not _state["enabled"] else grad.clone()
        elif _state["enabled"]:  # create_graph=True: keep the sum differentiable
            variable._grad = variable._grad + grad
        else:
            variable._grad.data += grad.data
            variable._grad._version_counter[0] += 1
        return ()


def _inplace_error(value, creator, now, then):
    """PyTorch's message for a saved tensor that was modified in place."""
    shape = ", ".join(str(s) for s in value.shape)
    kind = _Tensor._make(value).type() if not isinstance(value, _Tensor) else value.type()
    origin = f", which is output 0 of {creator.name()}," if creator is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{kind} [{shape}]]{origin} "
        f"is at version {now}; expected version {then} instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True)."
    )


class RemovableHandle:
    """Returned by every ``register_*hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class Function:
    """Base class of every differentiable op (``torch.autograd.Function``).

    Subclasses define ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` as
    static methods and are called through ``apply``.  ``forward`` may return
    Tensors or raw arrays (NumPy/CuPy); ``apply`` wraps arrays into Tensors.
    ``backward`` receives and returns Tensors, written with Tensor ops so that
    ``create_graph=True`` can differentiate it again.
    """

    # The grad_fn class name; PyTorch calls built-ins e.g. "AddBackward0".
    _backward_name = None

    def __init_subclass__(cls, **kwargs):
        # As PyTorch's FunctionMeta does: make the node class "<Name>Backward".
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_backward_name") or cls.__name__ + "Backward"
        cls._backward_cls = type(name, (Node,), {"_forward_cls": cls, "__module__": cls.__module__})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward``; if any input requires grad (and grad mode is on) record a node."""
        Tensor = _Tensor
        if _state["enabled"]:
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    return _apply_with_graph(cls, args, kwargs)
        enabled = _state["enabled"]
        _state["enabled"] = False  # forward never records (as in PyTorch)
        try:
            outputs = cls.forward(FunctionCtx(), *args, **kwargs)
        finally:
            _state["enabled"] = enabled
        return _wrap_plain(outputs)


def _wrap_plain(outputs):
    """Turn raw arrays returned by ``forward`` into Tensors (no graph)."""
    make = _Tensor._make
    if isinstance(outputs, tuple):
        return tuple(o if isinstance(o, _Tensor) or o is None else make(o) for o in outputs)
    return outputs if isinstance(outputs, _Tensor) else make(outputs)


def _apply_with_graph(cls, args, kwargs):
    """``Function.apply`` when a graph must be recorded."""
    Tensor = _Tensor
    node = cls._backward_cls()
    node._sequence_nr = next(_sequence)
    edges, needs, positions = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            positions.append(i)
            if a._requires_grad:
                needs.append(True)
                edges.append(a._edge())
            else:
                needs.append(False)
                edges.append((None, 0))
        else:
            needs.append(False)
    node.next_functions = tuple(edges)
    node.needs_input_grad = tuple(needs)
    node._num_inputs = len(args)
    node._tensor_positions = None if len(positions) == len(args) else tuple(positions)
    if _anomaly_state["enabled"]:
        node.metadata["traceback_"] = _anomaly_state["stack"]()

    _state["enabled"] = False
    try:
        outputs = cls.forward(node, *args, **kwargs)
    finally:
        _state["enabled"] = True
    single = not isinstance(outputs, tuple)
    outputs = (outputs,) if single else outputs
    node._num_outputs = len(outputs)
    results = tuple(_connect_output(node, i, o, args) for i, o in enumerate(outputs))
    if node._saved:
        node._pack_saved(results)
    return results[0] if single else results


def _connect_output(node, nr, out, args):
    """Make forward's ``nr``-th output a tensor whose ``grad_fn`` is ``node``."""
    Tensor = _Tensor
    if out is None:
        return None
    if not isinstance(out, Tensor):
        out = Tensor._make(out)
    elif any(out is t for t in node._dirty):
        out._bump_version()  # modified in place: it now belongs to this node
    elif any(out is a for a in args):
        out = Tensor._make(out.data, False, None, 0, out._version_counter)  # an alias
    differentiable = out.data.dtype.kind == "f" and not any(out is t for t in node._non_differentiable)
    if differentiable:
        out._requires_grad = True
        out.grad_fn = node
        out._output_nr = nr
    return out


# Anomaly mode (``anomaly_mode.py``) switches this on to record forward tracebacks.
_anomaly_state = {"enabled": False, "stack": None}


class once_differentiable:
    """Decorator for a ``backward`` that cannot itself be differentiated."""

    def __new__(cls, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(ctx, *args):
            with grad_mode.no_grad():
                return fn(ctx, *args)

        return wrapper
