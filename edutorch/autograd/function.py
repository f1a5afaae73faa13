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

``apply`` runs for every op a model executes, and every backward formula
runs through it too (with grad mode off, in a plain backward), so its path
without a graph is kept short: a ``ctx``, ``forward``, a Tensor around the array.

The profiler, autocast and anomaly mode see every op through one extension
point, :class:`Interceptors`: each registers itself from its own package
while it is on; this file imports none of them.
"""
import functools
import inspect
import itertools
import weakref

import numpy as np

from . import _saved_attrs, grad_mode
from . import forward_ad as _dual
from ._functions.layout import torch_layout
from ._saved_tensor import SavedVariable
from .._dtype import is_floating as _is_floating

_sequence = itertools.count()
_Tensor = None  # edutorch.Tensor, set by edutorch/_tensor.py (it imports us)
_ndarray = np.ndarray
_NO_EDGE = (None, 0)  # the edge of an input that does not require grad

FREED_GRAPH_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """What ``forward`` can tell ``backward`` (``torch.autograd.function.FunctionCtx``)."""

    _for_backward = ()
    _dirty = ()
    _non_differentiable = ()
    materialize_grads = True
    # Outside a recorded graph no input needs a gradient (enough entries for any op).
    needs_input_grad = (False,) * 16

    _for_forward = ()
    _in_jvp = False  # True while a custom Function's ``jvp`` runs: saved_tensors are save_for_forward's

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward``; their version is checked when unpacked."""
        self._for_backward = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors for ``jvp`` (forward-mode AD); ``jvp`` reads them as ``ctx.saved_tensors``."""
        self._for_forward = tensors

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
    _unpacks_all = False  # check every saved tensor before backward (built-in ops)
    _released = False
    # Hooks and extras live in the instance only once registered; these class
    # defaults let the engine test "any hooks?" with one attribute read.
    _tensor_hooks = None     # {output_nr: {id: hook}}  from Tensor.register_hook
    _retained = None         # {output_nr: weakref}     from Tensor.retain_grad
    _pre_hooks = None        # {id: hook}               from Node.register_prehook
    _post_hooks = None       # {id: hook}               from Node.register_hook
    _output_meta = None      # [(shape, dtype, device)] for materialize_grads
    _tensor_positions = None  # indices of the arguments with an edge, when some have none
    _none_slots = ()         # positions where save_for_backward got None: still None once freed
    _use_error = None        # a message, or ``f(tensor) -> message or None`` run at each use of its output (it raises
                             # the message; views.py also remakes a view's node there, as PyTorch reads it lazily)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- saved tensors ---------------------------------------------------
    def _pack_saved(self):
        """Turn each tensor ``forward`` saved into a :class:`~._saved_tensor.SavedVariable`
        (it keeps the tensor's version, or what a saved-tensor hook packed); ``None`` and numbers stay."""
        Tensor = _Tensor
        self._for_backward = [SavedVariable(value, self) if isinstance(value, Tensor) else value
                              for value in self._for_backward]

    @property
    def saved_tensors(self):
        """The values given to ``save_for_backward``, each tensor checked for in-place changes
        (in ``jvp``: those given to ``save_for_forward``)."""
        if self._in_jvp:
            return self._for_forward
        if self._released:
            raise RuntimeError(FREED_GRAPH_ERROR)
        return tuple([saved.unpack(self) if type(saved) is SavedVariable else saved
                      for saved in self._for_backward])

    def _check_saved_versions(self):
        """Raise PyTorch's error if a saved tensor was modified in place since ``forward``.

        A built-in op's backward (PyTorch's generated code) unpacks every saved
        variable before it computes anything, so the check fires even where the
        formula would not read the tensor; ``Node.apply`` calls this for built-ins.
        """
        for saved in self._for_backward:
            if type(saved) is SavedVariable:
                counter = saved.version_counter
                if counter is not None and counter[0] != saved.version:
                    raise RuntimeError(saved.inplace_error(self))

    def _saves(self, tensor):
        """Did this node save ``tensor`` itself (not a copy or its array) for backward?"""
        return any(type(saved) is SavedVariable and saved.data is tensor for saved in self._for_backward)

    # -- hooks on the node -------------------------------------------------
    def _retain(self, output_nr, tensor):
        """``tensor`` (this node's output ``output_nr``) keeps its gradient: ``Tensor.retain_grad``."""
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node's backward; may return new grads."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _add_hook(self._pre_hooks, fn)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return _add_hook(self._post_hooks, fn)

    @property
    def metadata(self):
        """A free dict per node; anomaly mode stores the forward traceback here."""
        return self.__dict__.setdefault("_metadata", {})

    def _free_saved(self):
        """Drop what ``forward`` saved (backward without ``retain_graph``); a second backward then fails.

        A slot that saved ``None`` still reads ``None`` afterwards
        (``grad_fn._saved_<name>``, as in PyTorch), so those positions are kept.
        """
        if self._for_backward:
            if None in self._for_backward:  # (SavedVariables compare by identity)
                self._none_slots = [i for i, saved in enumerate(self._for_backward) if saved is None]
            self._for_backward = ()
            self._released = True

    # -- backward ------------------------------------------------------------
    def apply(self, *grad_outputs):
        """Call the Function's ``backward`` and keep the grads of tensor inputs."""
        if self._for_backward and self._unpacks_all:
            self._check_saved_versions()
        if self._unpacks_all and not any(self.needs_input_grad):  # a built-in whose inputs' gradients go
            positions = self._tensor_positions                    # nowhere (views made under no_grad)
            return [None] * (self._num_inputs if positions is None else len(positions))
        if self._output_meta is not None and self.materialize_grads:
            grad_outputs = _materialize(self, grad_outputs)
        grads = self._forward_cls.backward(self, *grad_outputs)
        if type(grads) is not tuple:
            grads = (grads,)
        n = self._num_inputs
        if len(grads) != n:
            surplus = len(grads) - n
            # PyTorch allows trailing Nones (one, e.g. add's alpha, is the common case)
            if surplus == 1 and grads[n] is None or surplus > 1 and all(g is None for g in grads[n:]):
                grads = grads[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(grads)})"
                )
        positions = self._tensor_positions
        if positions is not None:  # drop the slots of non-tensor arguments
            # PyTorch's check, for custom Functions (built-ins name their node with
            # ``_backward_name`` and may compute a value for a Python-number argument)
            if self._forward_cls._backward_name is None:
                for i, g in enumerate(grads):
                    if g is not None and i not in positions:
                        raise RuntimeError(
                            f"function {self.name()} returned a gradient different than None at "
                            f"position {i + 1}, but the corresponding forward input was not a Variable"
                        )
            grads = [grads[i] for i in positions]
        return grads


def _materialize(node, grads):
    """Replace missing output gradients by zeros shaped like the outputs."""
    if all(g is not None for g in grads):
        return grads
    from .. import _creation

    return [
        g if g is not None or meta is None else _creation.zeros(meta[0], dtype=meta[1], device=meta[2])
        for g, meta in zip(grads, node._output_meta)
    ]


class AccumulateGrad(Node):
    """The graph node of a leaf tensor: adds the incoming gradient into ``.grad``."""

    next_functions = ()
    _num_outputs = 1
    _input_meta = ()
    # PyTorch gives AccumulateGrad the highest priority (sequence number UINT64_MAX):
    # once a leaf's gradient is complete it is accumulated before other ready nodes.
    _sequence_nr = 2**62

    def __init__(self, variable):
        self.variable = variable
        hooks = variable._hooks
        if hooks is not None:  # Tensor.register_hook on a leaf runs as this node's hook
            self._tensor_hooks = {0: hooks}

    def apply(self, grad):
        # a leaf that stopped requiring grad after the graph was built (``x.detach_()``,
        # ``x.requires_grad = False``) gets no gradient, as in PyTorch's AccumulateGrad
        if "_made_in_no_grad" in self.variable.__dict__:  # a view made under no_grad: PyTorch refuses it
            refuse_stale_no_grad_view(self.variable)  # here if its base was written since the graph was built
        if self.variable._requires_grad:
            accumulate_grad(self.variable, grad)
        return ()


def refuse_stale_no_grad_view(view):
    """A view made under ``no_grad`` of a base that requires grad, after it or its base was written in
    place (under ``no_grad`` too): PyTorch refuses to read its graph (``grad_fn``, ``is_leaf``, an op
    that records it, a backward that reaches its own gradient), as it cannot tell which graph the
    write should have.  Also when ``requires_grad_()`` gave it a gradient of its own."""
    from .._tensor_methods.views import stale_no_grad_view_error  # (views imports this module)

    message = stale_no_grad_view_error(view)
    if message is not None:
        raise RuntimeError(message)


def accumulate_grad(variable, grad):
    """``variable.grad += grad`` the way PyTorch's AccumulateGrad node does it.

    * The first gradient becomes ``.grad`` as a copy of its array (a recorded
      ``clone`` under ``create_graph``).  PyTorch may
      reuse the incoming tensor when nothing else refers to it; a copy has the
      same values and never aliases a tensor someone else holds (the same
      gradient reaching two leaves of ``a + b``, the user's ``gradient=``).
    * Later gradients are added in place (``.grad`` keeps its identity and its
      version goes up), unless a graph is being recorded (``create_graph=True``):
      then ``.grad`` becomes a new, differentiable sum.
    """
    if variable._grad is None:
        # a copy; under create_graph, ``clone`` records its node, so .grad keeps its graph
        variable._grad = grad.clone() if grad_mode.is_grad_enabled() else _Tensor._make(grad._data.copy())
    elif grad_mode.is_grad_enabled():
        variable._grad = variable._grad + grad
    else:
        variable._grad.add_(grad)
    hooks = variable._post_accumulate_grad_hooks
    if hooks:
        for fn in list(hooks.values()):
            fn(variable)


def accumulate_retained_grad(tensor, grad):
    """``tensor.grad`` of a non-leaf that ``retain_grad()``-s, as PyTorch's retain_grad hook sets it.

    The first gradient is copied; later ones are added out of place (``.grad``
    is replaced, never written into, unlike a leaf's).  Outside ``create_graph``
    (grad mode off) the gradient is detached, so ``.grad`` has no history.
    """
    g = grad if grad_mode.is_grad_enabled() else grad.detach()
    tensor._grad = g.clone() if tensor._grad is None else tensor._grad + g


class RemovableHandle:
    """Returned by every ``register_*hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict):
        try:
            self.hooks_dict_ref = weakref.ref(hooks_dict)  # OrderedDicts, as Module uses
        except TypeError:  # a plain dict cannot be weakly referenced: hold it directly
            self.hooks_dict_ref = lambda: hooks_dict
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


# -- the one extension point: interceptors ----------------------------------------------
class Interceptors:
    """Functions that wrap every call of one kind: PyTorch's dispatcher modes, in small.

    The profiler, autocast and anomaly mode are not part of autograd, yet each
    must see every op: the profiler times it, autocast casts its arguments,
    anomaly mode remembers where the forward was called.  In PyTorch they are
    layers of the dispatcher; here each one, while it is on, *registers* an
    interceptor from its own package, and :meth:`Function.apply` runs through
    :data:`apply_interceptors` (the engine through its ``node_interceptors``,
    around each backward node).  Autograd imports none of them.

    An interceptor is called as ``fn(proceed, *call)`` (for an op:
    ``fn(proceed, cls, args, kwargs)``) and returns what ``proceed(*call)``
    returns: the next interceptor, or the op itself after the last one.  It
    may change the arguments first (autocast), time the call (the profiler) or
    look at its result (anomaly mode).  Lower ``level`` runs further out: the
    profiler (0) times everything an op does, autocast's casts (1) included.

    Ops made inside an interceptor (autocast's casts) go through
    ``Function.apply`` from the top again, as PyTorch re-dispatches them.
    """

    def __init__(self):
        self.active = ()  # (level, fn) pairs, outermost first; empty: no cost but one test

    def register(self, fn, level):
        """Run ``fn`` around every call from now on (until :meth:`unregister`)."""
        self.active = tuple(sorted(self.active + ((level, fn),), key=lambda entry: entry[0]))

    def unregister(self, fn):
        self.active = tuple(entry for entry in self.active if entry[1] is not fn)

    def run(self, inner, *call):
        """``inner(*call)`` through every registered interceptor, outermost first."""
        return _proceed(self.active, 0, inner, call)


def _proceed(chain, i, inner, call):
    """Call the ``i``-th interceptor of ``chain``; its ``proceed`` calls the next one, the last ``inner``."""
    if i == len(chain):
        return inner(*call)
    return chain[i][1](lambda *changed: _proceed(chain, i + 1, inner, changed), *call)


apply_interceptors = Interceptors()  # around every Function.apply
composite_interceptors = Interceptors()  # around every op written as other ops (composite_op)
# around every in-place op (``x.add_(y)``), called as fn(proceed, tensor, cls, args): the profiler's
# ``aten::add_`` (the op's own Function.apply inside it is how edutorch computes it, not a second op)
inplace_interceptors = Interceptors()


def composite_op(name):
    """Decorator for a public op written as a composition of other ops (``matmul``, ``einsum``).

    The interceptors of :data:`composite_interceptors` see it as ONE op, ``name``,
    called as ``fn(proceed, name, args, kwargs)``: autocast casts its arguments
    once, at entry, as PyTorch's autocast kernel of that op does.
    """

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not composite_interceptors.active:  # nothing registered: just the op
                return fn(*args, **kwargs)
            return composite_interceptors.run(lambda _name, a, kw: fn(*a, **kw), name, args, kwargs)

        return wrapper

    return decorate


class Function:
    """Base class of every differentiable op (``torch.autograd.Function``).

    Subclasses define ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` as
    static methods and are called through ``apply``.  ``forward`` may return
    Tensors or raw arrays (NumPy/CuPy); ``apply`` wraps arrays into Tensors.
    ``backward`` receives and returns Tensors, written with Tensor ops so that
    ``create_graph=True`` can differentiate it again.

    The PyTorch 2 style also works: ``forward(*args)`` without ``ctx`` plus
    ``setup_context(ctx, inputs, output)`` to save what backward needs.
    """

    # The grad_fn class name; PyTorch calls built-ins e.g. "AddBackward0".
    _backward_name = None
    # How many leading arguments are operands that PyTorch turns into tensors
    # when they are Python numbers ("wrapped numbers"): add/sub/mul/div set 2.
    _number_operands = 0

    def __init_subclass__(cls, **kwargs):
        # As PyTorch's FunctionMeta does: make the node class "<Name>Backward".
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_backward_name") or cls.__name__ + "Backward"
        # A built-in's node checks every saved tensor before its backward runs (as
        # PyTorch's generated nodes do); a custom Function's only when it reads them.
        cls._backward_cls = type(name, (Node,), {
            "_forward_cls": cls, "__module__": cls.__module__,
            "_unpacks_all": getattr(cls, "_backward_name", None) is not None,
        })
        _saved_attrs.install(cls)  # grad_fn._saved_<name>, from the class's ``_saved_attrs`` table
        # PyTorch 2 style: ``forward(*args)`` without ctx, plus ``setup_context``
        cls._uses_setup_context = cls.setup_context is not Function.setup_context

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *tangents):
        """The tangent formula (forward-mode AD): the outputs' tangents from the inputs'.

        One tangent per argument of ``forward`` (a custom Function gets zeros for a
        tensor without one, ``None`` for a non-tensor); returns one per output.  A
        built-in op also finds its arguments in ``ctx.primals`` and its outputs in
        ``ctx.result`` (``forward_ad.py`` tells the story).
        """
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward``; if grad mode is on and an input requires grad, record a node.

        While the profiler, autocast or anomaly mode is on, the call goes
        through their :data:`apply_interceptors` first.
        """
        if cls._backward_name is None and (kwargs or cls._uses_setup_context):  # a user's Function:
            args, kwargs = _bind_arguments(cls, args, kwargs)  # keywords become positions (defaults too)
        if apply_interceptors.active:
            return apply_interceptors.run(_apply, cls, args, kwargs)
        return _apply(cls, args, kwargs)


_forward_signatures = weakref.WeakKeyDictionary()  # a user's Function -> its forward's signature


def _forward_signature(cls):
    signature = _forward_signatures.get(cls)
    if signature is None:
        signature = _forward_signatures[cls] = inspect.signature(cls.forward)
    return signature


def _bind_arguments(cls, args, kwargs):
    """A custom Function's keyword arguments in the places ``forward`` names them, as PyTorch's
    ``apply`` binds them: a tensor given by keyword gets its edge and its tangent like any
    other input.  The split form (``setup_context``) also gets the defaults, as in PyTorch."""
    signature = _forward_signature(cls)
    try:
        if cls._uses_setup_context:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return bound.args, bound.kwargs
        bound = signature.bind(None, *args, **kwargs)  # (ctx)
    except TypeError as error:  # PyTorch's message: "forward() got an unexpected keyword argument 'z'"
        raise TypeError(f"forward() {error}") from None
    return bound.args[1:], bound.kwargs


def _apply(cls, args, kwargs):
    """``Function.apply`` itself.

    Without a node (grad mode off, as in a plain backward, or no input that
    requires grad) an op costs a ``ctx``, its ``forward`` and a Tensor around
    the result: the path every backward formula takes, so it stays that short.
    """
    node = _new_node(cls, args) if grad_mode._state["enabled"] and _requires_grad(args) else None
    # forward-mode AD: the one test an op pays outside a dual level (None: no argument carries a tangent)
    tangents = _dual.input_tangents(args, kwargs) if _dual._state.active else None
    if tangents is None:
        ctx = FunctionCtx() if node is None else node
        outputs = _forward(cls, ctx, args, kwargs)
    else:  # a ctx that keeps what the tangent formula needs; forward runs with forward AD off (PyTorch)
        ctx = _DualCtx(tangents) if node is None else node
        outputs = _dual.without_tangents(_forward, cls, ctx, args, kwargs)
    if node is None:  # outside the graph: Tensors around the arrays
        results = _Tensor._make(outputs) if type(outputs) is _ndarray else _as_tensors(outputs)
    else:
        results = _connect_outputs(node, outputs, args)
    if tangents is not None:  # the op's tangent formula gives the outputs theirs
        _dual.push_tangents(cls, ctx, args, results, tangents)
    return results


class _DualCtx(FunctionCtx):
    """The ``ctx`` of an op that records no node but has tangents to push (forward-mode AD).

    ``needs_input_grad`` says which inputs have a tangent, so ``forward`` keeps what
    the derivative needs, and ``saved_tensors`` reads it back (without a node there is
    no version check: the tangent formula runs right after ``forward``).
    """

    def __init__(self, tangents):
        self.needs_input_grad = tuple(t is not None for t in tangents)

    @property
    def saved_tensors(self):
        return self._for_forward if self._in_jvp else tuple(self._for_backward)


def _forward(cls, ctx, args, kwargs):
    """``forward`` with grad mode off (a forward never records, as in PyTorch), its arrays laid
    out with PyTorch's strides (reshape views by them)."""
    if cls._uses_setup_context:  # PyTorch 2's split form: forward(*args), then setup_context
        outputs = grad_mode.call_with_grad_mode(False, _forward_then_setup_context, cls, ctx, args, kwargs)
    else:
        outputs = grad_mode.call_with_grad_mode(False, cls.forward, ctx, *args, **kwargs)
    return torch_layout(cls, outputs, args)


def _requires_grad(args):
    """Does any argument require grad (so that the op must be recorded)?"""
    Tensor = _Tensor
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def _forward_then_setup_context(cls, ctx, args, kwargs):
    """PyTorch 2's split form: ``forward(*args)`` without ``ctx``, then ``setup_context(ctx, inputs, output)``."""
    output = cls.forward(*args, **kwargs)
    cls.setup_context(ctx, args, output)
    return output


def _as_tensors(outputs):
    """Turn the raw arrays ``forward`` returned into Tensors outside the graph."""
    Tensor = _Tensor
    if isinstance(outputs, tuple):
        return tuple(o if o is None or isinstance(o, Tensor) else Tensor._make(o) for o in outputs)
    return outputs if outputs is None or isinstance(outputs, Tensor) else Tensor._make(outputs)  # None: as PyTorch


def _new_node(cls, args):
    """The graph node (also the ``ctx``) of one call: an edge per tensor input.

    Records, per argument, whether it needs a gradient (``needs_input_grad``),
    the edge its gradient will travel (``next_functions``) and its shape and
    dtype (to check the gradient ``backward`` returns).
    """
    Tensor = _Tensor
    node = cls._backward_cls()
    node._sequence_nr = next(_sequence)
    edges, needs, meta = [], [], []
    positions = None  # indices of the tensor arguments, built only once a non-tensor shows up
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if positions is not None:
                positions.append(i)
            if a._requires_grad:
                fn = a._grad_fn
                if fn is not None and fn._use_error is not None:  # a stale split/unbind output
                    refuse_use(fn, a)
                    fn = a._grad_fn  # (a use may remake a view's node: views._FollowBase)
                edge = (fn, a._output_nr) if fn is not None else a._edge()
                needs.append(edge[0] is not None)  # not for a view whose gradient goes nowhere (PyTorch's
                edges.append(edge)                 # invalid edge: a view made under no_grad, say)
                meta.append((a._data.shape, a._data.dtype))
            else:
                needs.append(False)
                edges.append(_NO_EDGE)
                meta.append(None)
        elif i < cls._number_operands:  # ``x * 2``: PyTorch shows the number's edge as (None, 0)
            needs.append(False)
            edges.append(_NO_EDGE)
            meta.append(None)
            if positions is not None:
                positions.append(i)
        else:
            needs.append(False)
            if positions is None:
                positions = list(range(i))  # every argument before this one had an edge
    node.next_functions = tuple(edges)
    node.needs_input_grad = tuple(needs)
    node._input_meta = meta
    node._num_inputs = len(args)
    if positions is not None:  # the class default None: every argument has an edge
        node._tensor_positions = positions
    return node


def use_error(node, tensor):
    """What ``node._use_error`` says of ``tensor`` (an output of ``node``): a message, or None when
    ``tensor`` is still usable (a split/unbind output whose base was not written since)."""
    error = node._use_error
    return error if type(error) is str else error(tensor)


def refuse_use(node, tensor):
    """Raise :func:`use_error` for ``tensor``, if it says so."""
    message = use_error(node, tensor)
    if message is not None:
        raise RuntimeError(message)


def _connect_outputs(node, outputs, args):
    """Make forward's outputs Tensors whose ``grad_fn`` is ``node``; pack what it saved."""
    if type(outputs) is tuple:
        node._num_outputs = len(outputs)
        results = tuple([_connect_output(node, i, o, args) for i, o in enumerate(outputs)])
        node._output_meta = [None if r is None else (r._data.shape, r.dtype, r.device) for r in results]
    else:
        node._num_outputs = 1
        results = _connect_output(node, 0, outputs, args)
    if node._for_backward:
        node._pack_saved()
    return results


def _connect_output(node, nr, out, args):
    """Make forward's ``nr``-th output a tensor whose ``grad_fn`` is ``node``."""
    Tensor = _Tensor
    if type(out) is _ndarray and out.dtype.kind == "f":  # the common case: a new float array
        return Tensor._make(out, True, node, nr)
    if out is None:
        return None
    if not isinstance(out, Tensor):
        out = Tensor._make(out)
    elif node._dirty and _among(out, node._dirty):
        if out.grad_fn is None and out._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        out._version_counter[0] += 1  # modified in place: it now belongs to this node
    elif _among(out, args):
        out = Tensor._make(out._data, False, None, 0, out._version_counter)  # an alias
    if _is_floating(out._data.dtype) and not (  # bfloat16 included (its NumPy kind is "V")
        node._non_differentiable and _among(out, node._non_differentiable)
    ):
        out._requires_grad = True
        out.grad_fn = node
        out._output_nr = nr
    return out


def saved_output_now_is(result, tensor):
    """An in-place op wrote its result ``result`` into ``tensor``: what the node saved of ``result`` is now ``tensor``.

    In PyTorch the saved result of an in-place op (``relu_``, ``exp_``...) is the
    tensor itself, so a later in-place change of ``tensor`` makes backward raise;
    here the saved output then tracks ``tensor``'s memory and version counter,
    so the same check fires.  (``_tensor_methods/inplace.py`` calls this.)
    """
    for saved in result.grad_fn._for_backward:
        if type(saved) is SavedVariable and saved.is_output and saved.data is result._data:
            saved.now_tracks(tensor)


def _among(t, items):
    """Is ``t`` one of ``items``?  By identity: ``in`` would call Tensor ``==``, elementwise."""
    for item in items:
        if item is t:
            return True
    return False


def once_differentiable(fn):
    """Decorator for a ``backward`` that cannot itself be differentiated.

    The wrapped backward runs with grad mode off.  Under ``create_graph=True``
    (grad mode on) with an incoming gradient that requires grad, each returned
    gradient is passed through :class:`DelayedError`, as PyTorch does: the
    values are right, and differentiating them again raises a RuntimeError
    instead of silently missing the second-order terms.
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        outputs = grad_mode.call_with_grad_mode(False, fn, ctx, *args)
        if not grad_mode.is_grad_enabled() or not _requires_grad(args):
            return outputs
        single = not isinstance(outputs, tuple)
        # detached copies that require grad, so that the error node is recorded
        fakes = [o if o is None else o.detach().requires_grad_() for o in ((outputs,) if single else outputs)]
        wrapped = DelayedError.apply(*fakes)
        return wrapped if single else (wrapped if isinstance(wrapped, tuple) else (wrapped,))

    return wrapper


class DelayedError(Function):
    """Identity whose backward raises: what ``@once_differentiable`` hangs on its results.

    Its node is of class ``Error``, as PyTorch's.
    """

    _backward_name = "Error"

    @staticmethod
    def forward(ctx, *grads):
        outs = tuple(None if g is None else g._data for g in grads)
        return outs[0] if len(outs) == 1 else outs

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


# PyTorch's node is the C++ class ``Error``: its ``name()`` is the qualified C++ name
DelayedError._backward_cls.name = lambda self: "torch::autograd::Error"
