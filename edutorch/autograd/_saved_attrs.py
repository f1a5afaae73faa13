"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: what a node keeps, under PyTorch's names.

PyTorch's generated nodes expose every value their backward formula needs,
named after the op's arguments in ``derivatives.yaml``::

    y = x.pow(2)
    y.grad_fn._saved_self is x         # True: an input is kept as it is
    y.grad_fn._saved_exponent          # 2: a Python number stays one
    y = x.exp()
    y.grad_fn._saved_result            # equal to y, a new Tensor whose grad_fn is the node
    y.grad_fn._raw_saved_result        # the SavedTensor itself: register_hooks(pack, unpack)

Each ``Function`` that wants these declares a small table next to its
``forward``, from PyTorch's name to where edutorch keeps the value::

    class Mul(Function):
        _saved_attrs = {"self": Saved(0), "other": Saved(1)}   # save_for_backward(a, b)
    class Sum(Function):
        _saved_attrs = {"dim": ..., "keepdim": lambda ctx: ctx.keepdim, ...}

``Saved(i)`` names the ``i``-th value given to ``save_for_backward``; anything
else is a function of the node (``ctx``) returning a plain Python value.
:func:`install`, called by ``Function.__init_subclass__``, turns the table into
properties of the node class, so ``dir(grad_fn)`` lists them as in PyTorch.

What reading one does, as PyTorch's ``SavedVariable::unpack``:

* a saved input comes back as the same Tensor object (``is x``); a saved
  output as a new Tensor on the same data whose ``grad_fn`` is the node;
  a Python number saved as a tensor operand (``x * 2``) as a 0-d tensor
  (int64, float64 or bool, PyTorch's "wrapped number");
* a tensor modified in place since the forward raises the in-place error;
* after a backward without ``retain_graph`` a saved tensor raises the
  "Trying to backward through the graph a second time" error; a slot that
  held ``None`` still reads ``None``, and non-tensor values (dims, sizes,
  numbers) stay readable, as in PyTorch.
"""
import numpy as np

from . import function as _function
from ._saved_tensor import SavedVariable

_FREED_HOOKS_ERROR = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True "
    "if you need to backward through the graph a second time or if you need to access saved "
    "variables after calling backward."
)
_NONE_HOOKS_ERROR = "Calling register_hooks on a saved tensor with value None is forbidden"
_TWICE_HOOKS_ERROR = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)


class Saved:
    """In a ``_saved_attrs`` table: the ``index``-th value the op gave to ``save_for_backward``."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def int64(value):
    """An int (or tuple of ints) read back the way PyTorch returns its int64 node attributes.

    PyTorch's generated getters convert ``int64_t`` attributes (dims, ``ignore_index``)
    through an *unsigned* conversion, so a negative value reads as its two's-complement:
    ``x.softmax(-1).grad_fn._saved_dim`` is ``18446744073709551615``.  Values are kept as
    the caller passed them (``-1``, not the wrapped ``1``).  Non-negative values are unchanged.
    """
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(v % 2**64 for v in value)
    return value % 2**64


def int64_list(value):
    """A dim-list argument (``sum(dim=...)``) as PyTorch reads it back: a tuple (``1`` -> ``(1,)``),
    its entries as :func:`int64`; ``None`` stays ``None``."""
    if value is None or isinstance(value, (tuple, list)):
        return int64(value)
    return int64((value,))


def layout(array):
    """What ``sym_sizes``/``sym_strides`` are read from later: kept as NumPy has it (cheap in a forward)."""
    return array.shape, array.strides, array.itemsize


def sym_sizes(layout):
    return tuple(layout[0])


def sym_strides(layout):
    """Strides in elements, as PyTorch counts them (NumPy's are in bytes)."""
    return tuple(s // layout[2] for s in layout[1])


# -- installing the table on a node class -----------------------------------------
def install(function_cls):
    """Give ``function_cls``'s node class one property per entry of its own ``_saved_attrs``.

    Only the class's own table counts (not an inherited one): a subclass is often
    a different PyTorch node (``Unsqueeze(View)`` saves a dim, not sizes).
    """
    table = function_cls.__dict__.get("_saved_attrs")
    if not table:
        return
    node_cls = function_cls._backward_cls
    for name, spec in table.items():
        if isinstance(spec, Saved):
            setattr(node_cls, "_saved_" + name, property(_tensor_reader(spec.index)))
            setattr(node_cls, "_raw_saved_" + name, property(_raw_reader(name, spec.index)))
        else:
            setattr(node_cls, "_saved_" + name, property(spec))


def _tensor_reader(index):
    def read(node):
        return unpack(node, index)

    return read


def _raw_reader(name, index):
    def read(node):
        # one object per saved tensor, as PyTorch's (``g._raw_saved_self is g._raw_saved_self``)
        raws = node.__dict__.setdefault("_raw_handles", {})
        if name not in raws:
            raws[name] = SavedTensor(node, index)
        return raws[name]

    return read


# -- reading one saved value --------------------------------------------------------
def unpack(node, index):
    """The ``index``-th saved value of ``node`` as ``_saved_<name>`` returns it."""
    if index in node._none_slots:  # still None once the graph is freed, as in PyTorch
        return None
    if node._released:
        raise RuntimeError(_function.FREED_GRAPH_ERROR)
    if index >= len(node._for_backward) or node._for_backward[index] is None:
        return None
    saved = node._for_backward[index]
    return _as_tensor(saved.unpack(node) if type(saved) is SavedVariable else saved)  # version-checked


def _as_tensor(value):
    """What ``_saved_<name>`` shows of a saved value: a Python number as a 0-d tensor."""
    return value if isinstance(value, _function._Tensor) else wrapped_number(value)


def wrapped_number(value):
    """A Python number as the 0-d tensor PyTorch makes of it (int64, float64 or bool)."""
    dtype = bool if isinstance(value, bool) else np.int64 if isinstance(value, int) else np.float64
    return _function._Tensor._make(np.asarray(value, dtype=dtype))


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved tensor of a node (``torch._C._autograd.SavedTensor``).

    ``register_hooks(pack_hook, unpack_hook)`` hooks this one tensor as
    ``saved_tensors_hooks`` hooks every tensor saved in a region: ``pack_hook``
    runs at once on the saved tensor and the node keeps what it returns;
    ``unpack_hook`` runs at each later access (``_saved_<name>``, backward).
    (The node's slot itself is a ``_saved_tensor.SavedVariable``; this is only
    the handle on it, named as PyTorch's class.)
    """

    __slots__ = ("_node", "_index")

    def __init__(self, node, index):
        self._node = node
        self._index = index

    def register_hooks(self, *hooks):
        """Pack this saved tensor with ``pack_hook`` now, unpack it with ``unpack_hook`` when read."""
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types are "
                "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                "arg1: collections.abc.Callable) -> None\n\nInvoked with: "
                + ", ".join(repr(a) for a in (self,) + hooks)
            )
        node, index = self._node, self._index
        saved = node._for_backward[index] if not node._released and index < len(node._for_backward) else None
        if type(saved) is SavedVariable and saved.unpack_hook is not None:
            raise RuntimeError(_TWICE_HOOKS_ERROR)
        if index in node._none_slots:
            raise RuntimeError(_NONE_HOOKS_ERROR)
        if node._released:
            raise RuntimeError(_FREED_HOOKS_ERROR)
        if saved is None:
            raise RuntimeError(_NONE_HOOKS_ERROR)
        # as PyTorch: the tensor is packed as it is now, without a version check
        tensor = _as_tensor(saved.unpack(node, check_version=False) if type(saved) is SavedVariable else saved)
        node._for_backward[index] = SavedVariable(tensor, node, hooks)
