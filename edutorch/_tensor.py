"""``torch.Tensor``: an n-dimensional array plus what autograd needs.

A Tensor holds

* ``_data``: the NumPy array (CuPy on ``device="cuda"``) with the values
  (PyTorch's storage; ``t.data`` is PyTorch's ``.data``, a Tensor over it);
* ``requires_grad``, ``grad`` and ``grad_fn``: a leaf (made by the user) has
  ``grad_fn=None`` and receives its gradient in ``.grad``; a tensor made by an
  op remembers the graph node that made it in ``grad_fn``;
* ``_version``: a counter bumped by every in-place op, shared with views, so
  autograd can tell when a tensor it saved has been changed.

Operators and methods come from the topic mixins of ``_tensor_methods/``
(arithmetic, reduction, shape, indexing, in-place...): one-liners that call
the ``Function`` of each op (``autograd/_functions``); the math lives there,
next to its gradient.
"""
import warnings
import weakref

import numpy as np

from . import _dtype, _scope, backend
from ._shared_memory import shared_array, shared_block
from . import _tensor_methods
from ._tensor_methods import views as _views
from ._tensor_methods import (
    ArithmeticMethods, BlasMethods, ComparisonMethods, CompositeMethods, ConversionMethods, IndexingMethods, InplaceMethods,
    LinalgMethods, ReductionMethods, SamplingMethods, ShapeMethods, SortingMethods, UnaryMethods,
)
from . import autograd as _autograd
from .autograd import function as _function, grad_mode as _grad_mode
from .autograd._functions import utils as _function_utils
from .autograd._functions.utils import wrap_dim
from ._tensor_str import _str


class Size(tuple):
    """``torch.Size``: a tuple of dimensions that prints as ``torch.Size([2, 3])``."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


class device:
    """``torch.device``: where a tensor lives, ``device(type='cpu')``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}"
            )
        self.type = type
        self.index = index

    def __repr__(self):
        extra = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{extra})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """``with torch.device("meta"):`` makes it the default device of the block's new tensors."""
        from . import _creation

        _DEFAULT_DEVICES.append(_creation.get_default_device())
        _creation.set_default_device(self)
        return self

    def __exit__(self, *exc_info):
        from . import _creation

        _creation.set_default_device(_DEFAULT_DEVICES.pop())
        return False


_CPU = device("cpu")
_CUDA = device("cuda", 0)
_META = device("meta")
_DEFAULT_DEVICES = []  # the default devices that ``with device(...)`` blocks replaced, innermost last


def _follow_base_requires_grad(view, base):
    """A view made before its base was set to require grad (``v = x.view(4); x.requires_grad_()``):
    PyTorch's ``v.requires_grad`` reads the base's flag, so ops on ``v`` are recorded, but ``v``
    has no node and no gradient accumulator of its own: the gradient that reaches it is dropped.
    If the base was written in place since the view was made, PyTorch remakes the view's graph
    from the base (``AsStridedBackward0``): its gradient then reaches the base."""
    from ._tensor_methods import views

    if view._grad_fn is not None or own_requires_grad(view):
        return
    if not base._requires_grad:
        if view.__dict__.pop("_requires_grad_of_base", False):
            view._requires_grad = False
    elif "_made_in_no_grad" in view.__dict__:  # PyTorch refuses it once written (_stale_no_grad_view)
        view._requires_grad = view._requires_grad_of_base = True
    else:
        if view.__dict__.get("_view_version") != base._version_counter[0]:
            views.remake_from_base(view, base)
        if view._grad_fn is None:  # not written since (or no longer in the base's memory)
            view._requires_grad = True
            view._requires_grad_of_base = True


_DETACH_VIEW_ERROR = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
    "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
    "detach_() cannot be called on these gradients. To fix this error, please refer to the "
    "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)


def own_requires_grad(view):
    """Was a view made under ``no_grad`` given ``requires_grad_()``?  PyTorch's flag is then its own or
    its base's: it keeps its own gradient whatever its base's flag becomes."""
    return view._requires_grad and "_made_in_no_grad" in view.__dict__ and "_requires_grad_of_base" not in view.__dict__


class Tensor(ArithmeticMethods, UnaryMethods, ComparisonMethods, BlasMethods, LinalgMethods, ReductionMethods,
             SortingMethods, ShapeMethods, IndexingMethods, ConversionMethods, InplaceMethods, SamplingMethods,
             CompositeMethods):
    """A multi-dimensional array that can record the operations applied to it."""

    __slots__ = (
        "_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter",
        "__weakref__", "__dict__",
    )
    __array_priority__ = 1000  # so ``ndarray + Tensor`` calls Tensor.__radd__
    # Rarely set, so kept out of the slots: these class defaults are read until a
    # tensor gets its own value (in its ``__dict__``), and ``_make`` stays short.
    _accumulator = None                  # weakref to the leaf's AccumulateGrad node
    _hooks = None                        # {id: hook} from register_hook on a leaf
    _post_accumulate_grad_hooks = None   # {id: hook} run after .grad is updated
    _fw_grad = None                      # the tangent of forward-mode AD (autograd/forward_ad.py)
    _made_in_no_grad = False             # a view made under no_grad (views.track_view)

    # -- .data: the same storage, outside autograd ---------------------------
    @property
    def data(self):
        """``Tensor.data``: a new Tensor over the same storage, unseen by autograd.

        Like ``detach()`` it has ``requires_grad=False`` and no ``grad_fn``; unlike
        ``detach()`` it has its own version counter, so an in-place change made
        through ``.data`` is not noticed by autograd (no version bump on ``self``).
        """
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        """``t.data = other``: swap ``t``'s storage for ``other``'s (any shape or dtype)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_tp_name(type(value))}")
        if self._requires_grad and not _dtype.is_floating(value._data.dtype):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex dtype"
            )
        self._data = value._data

    def __new__(cls, *args, dtype=None, device=None):
        """``torch.Tensor(data)`` or ``torch.Tensor(*sizes)``: a float32 tensor."""
        if len(args) == 1 and not isinstance(args[0], int):
            data = np.asarray(args[0]._data if isinstance(args[0], Tensor) else args[0], dtype=np.float32)
        else:
            data = np.empty(args, dtype=np.float32)
        return cls._make(data)

    # -- fast construction, used by every op ---------------------------------
    @classmethod
    def _make(cls, data, requires_grad=False, grad_fn=None, output_nr=0, version_counter=None):
        """Wrap an array without copying: the one constructor every op result passes through."""
        t = object.__new__(cls)
        # NumPy reductions return NumPy scalars, not arrays: make those 0-d arrays
        # (the isinstance test first: a failing hasattr costs an exception inside)
        if type(data) is not np.ndarray and type(data) is not backend.MetaArray and (
            isinstance(data, np.generic) or not hasattr(data, "__cuda_array_interface__")
        ):
            data = np.asarray(data)
        t._data = data
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        if version_counter is None:  # a new storage; inside inference_mode, an inference tensor's
            version_counter = [0] if not _grad_state["inference"] else _grad_mode.InferenceVersionCounter((0,))
        t._version_counter = version_counter
        return t

    # -- autograd attributes ------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._grad_fn is not None:
            hint = "" if value else (
                " If you want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + hint)
        if value and not _dtype.is_floating(self._data.dtype):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and self.is_inference() and not _grad_state["inference"]:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if "_requires_grad_of_base" in self.__dict__:  # a view whose flag is its base's
            if not value:
                return  # PyTorch: its own flag is False already, the base's still counts
            del self._requires_grad_of_base  # its own flag: it gets a gradient of its own
        self._requires_grad = bool(value)
        for view in list(self.__dict__.get("_views", ())):
            _follow_base_requires_grad(view, self)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place and return ``self``.

        On a non-leaf (which requires grad already) ``requires_grad_(True)`` changes
        nothing, as in PyTorch; ``requires_grad_(False)`` raises.
        """
        if requires_grad and self._grad_fn is not None:
            return self
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        """The graph node of the op that made this tensor (None for a leaf).

        PyTorch refuses to read it (its graph is ambiguous) for a view whose base was written
        in place since, when the view was made under ``no_grad`` or by ``split``/``unbind``
        (``is_leaf``, ``backward`` and ops that record it refuse the same way).  The engine
        reads the node itself, ``_grad_fn``."""
        fn = self._grad_fn
        if fn is None:
            if self._made_in_no_grad:
                _function.refuse_stale_no_grad_view(self)
            return None
        if fn._use_error is not None:  # a split/unbind output (or a view of a no_grad view) gone stale
            _function.refuse_use(fn, self)
            return self._grad_fn  # (a read may remake a view's node: views._FollowBase)
        return fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    @property
    def is_leaf(self):
        """True for tensors not made by a recorded op (their ``grad_fn`` is None)."""
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad_fn is not None and not self.__dict__.get("_retains_grad"):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(
                    f"assigned grad has data of a different size: {list(value.shape)} vs {list(self.shape)}"
                )
        self._grad = value

    @property
    def _version(self):
        """How many in-place ops changed this tensor (or a view of its storage)."""
        if type(self._version_counter) is _grad_mode.InferenceVersionCounter:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    def _bump_version(self):
        self._version_counter[0] += 1

    def _edge(self):
        """The graph edge a gradient for this tensor flows into: ``(node, output_nr)``."""
        if self._grad_fn is not None:
            return (self._grad_fn, self._output_nr)
        if "_made_in_no_grad" in self.__dict__:
            _function.refuse_stale_no_grad_view(self)
        if "_requires_grad_of_base" in self.__dict__:  # its gradient goes nowhere (_follow_base_requires_grad)
            return (None, 0)
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is None:
            acc = _function.AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return (acc, 0)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. graph leaves (``Tensor.backward``)."""
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.is_leaf:  # a leaf: AccumulateGrad runs these before accumulating
            if self._hooks is None:
                self._hooks = {}
                acc = self._accumulator() if self._accumulator is not None else None
                if acc is not None:  # a node made before the first hook: tell it
                    acc._tensor_hooks = {0: self._hooks}
            return _function._add_hook(self._hooks, hook)
        node = self._grad_fn
        if node._tensor_hooks is None:
            node._tensor_hooks = {}
        return _function._add_hook(node._tensor_hooks.setdefault(self._output_nr, {}), hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` on a leaf after its ``.grad`` has been updated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = {}
        return _function._add_hook(self._post_accumulate_grad_hooks, hook)

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if _views.is_raw_leaf(self) or self.__dict__.get("_retains_grad"):  # (PyTorch's C++ is_leaf)
            return
        message = _function.use_error(self._grad_fn, self) if self._grad_fn._use_error is not None else None
        if message is not None:  # a stale view: its base was written since
            if own_requires_grad(self):  # made under no_grad and given requires_grad_(): PyTorch's leaf
                return
            raise RuntimeError(message)  # a split/unbind output
        self._retains_grad = True
        self._grad_fn._retain(self._output_nr, self)

    @property
    def retains_grad(self):
        return bool(self.__dict__.get("_retains_grad"))

    def detach(self):
        """A new tensor sharing storage (and version counter) but out of the graph."""
        return Tensor._make(self._data, False, None, 0, self._version_counter)

    def detach_(self):
        """Detach this tensor from the graph in place.

        PyTorch refuses it on a view (its graph is its base's), and a node that saved
        this tensor before refuses it at backward (``SavedVariable.unpack``)."""
        if "_view_of" in self.__dict__:
            raise RuntimeError(_DETACH_VIEW_ERROR)
        if self._grad_fn is not None:  # when, in the order nodes are made (``_sequence_nr``)
            self._detached_in_place = next(_function._sequence)
        self._grad_fn = None
        self._requires_grad = False
        self._fw_grad = None  # forward mode: the tangent goes too (views made before keep theirs)
        for view in list(self.__dict__.get("_views", ())):
            _follow_base_requires_grad(view, self)  # those whose flag is this tensor's
            _views.follow_detached_base(view, self)  # those whose node PyTorch remakes from this tensor
        return self

    # -- metadata -----------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    @property
    def dtype(self):
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        if type(self._data) is np.ndarray:
            return _CPU
        return _META if type(self._data) is backend.MetaArray else _CUDA

    @property
    def is_cuda(self):
        return type(self._data) is not np.ndarray and type(self._data) is not backend.MetaArray

    @property
    def is_meta(self):
        """True on the ``meta`` device: a shape and a dtype, no data (``edutorch/_meta.py``)."""
        return type(self._data) is backend.MetaArray

    def is_floating_point(self):
        return _dtype.is_floating(self._data.dtype)

    def element_size(self):
        return self._data.itemsize

    def type(self, dtype=None):
        """``'torch.FloatTensor'`` style name, or a cast when ``dtype`` is given."""
        if dtype is None:
            names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
                     "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
            prefix = "torch." if not self.is_cuda else "torch.cuda."
            return f"{prefix}{names[self._data.dtype.name]}Tensor"
        return self.to(dtype)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __getattr__(self, name):
        """Only reached for a missing attribute: out-of-scope PyTorch names say why."""
        raise _scope.missing("torch.Tensor", name, f"'{type(self).__name__}' object has no attribute '{name}'")

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError(_NUMPY_GRAD_ERROR)
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self, *, tensor_contents=None):
        return _str(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # -- leaving the tensor world ---------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if self.is_meta:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item()

    def tolist(self):
        return backend.to_device(self._data, "cpu").tolist()

    def numpy(self, *, force=False):
        """The NumPy array sharing this tensor's memory (CPU only, no grad)."""
        if self._requires_grad and not force:
            raise RuntimeError(_NUMPY_GRAD_ERROR)
        if self.is_meta:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")
        if self.is_cuda:
            if not force:
                raise TypeError(
                    "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to "
                    "copy the tensor to host memory first."
                )
            return self._data.get()
        return self._data

    # -- shared and pinned memory (torch.multiprocessing, DataLoader) ---------------
    def share_memory_(self):
        """Move the array into shared memory (once), so processes see one copy; returns self.

        Unlike PyTorch, a view taken *before* the move keeps the old memory."""
        if not self.is_cuda and not self.is_shared():
            self._data = shared_array(self._data)
        return self

    def is_shared(self):
        """True if the array lives in shared memory (always for CUDA, as in PyTorch)."""
        return self.is_cuda or shared_block(self._data) is not None

    def pin_memory(self, device=None):
        """Page-locked host memory needs an accelerator: PyTorch's error on a CPU-only machine."""
        if device is not None:
            _warn_device_argument("pin_memory")
        self.is_pinned(device)
        if device is not None and _device_type(device) == "cpu":
            raise RuntimeError("CPU device type not an accelerator.")
        if not backend.cuda_is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        raise NotImplementedError("edutorch does not model pinned (page-locked) host memory")

    def is_pinned(self, device=None):
        """False: edutorch never pins memory (what CPU-only PyTorch answers too)."""
        if device is not None:
            _warn_device_argument("is_pinned")
        return False


def typename(obj):
    """``torch.typename``: ``'torch.FloatTensor'`` for tensors, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _tp_name(cls):
    """A type's name as CPython's C code prints it (``list``, ``numpy.ndarray``, ``Linear``)."""
    is_heap_type = cls.__flags__ & (1 << 9)  # classes made by ``class`` statements
    if is_heap_type or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"

def _device_type(dev):
    return device(dev).type


def _warn_device_argument(method):
    warnings.warn(f"The argument 'device' of Tensor.{method}() is deprecated. Please do not pass "
                  "this argument.", DeprecationWarning, stacklevel=3)


_NUMPY_GRAD_ERROR = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


_function._Tensor = Tensor
_grad_state = _grad_mode._state  # read by _make for every new tensor
from . import _numpy_compat  # noqa: E402  x.sum(axis=0, keepdims=True), as PyTorch accepts

for _name in _tensor_methods.__all__:
    _numpy_compat.patch_class(getattr(_tensor_methods, _name))
_numpy_compat.patch_class(Tensor)
_function_utils._Tensor = Tensor
_autograd.Variable = Tensor  # torch.autograd.Variable is an alias of Tensor
