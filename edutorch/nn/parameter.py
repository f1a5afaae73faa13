"""``torch.nn.Parameter`` and ``torch.nn.Buffer``: tensors a Module registers.

A Parameter is an ordinary Tensor (same storage, same ops) with one extra
meaning: when assigned as an attribute of a :class:`~edutorch.nn.Module` it is
registered in ``module._parameters`` and so appears in ``parameters()``,
``state_dict()`` and the optimizer.  It requires grad by default.

A Buffer is a tensor that is part of a module's state but is not trained
(BatchNorm's ``running_mean``); assigning ``nn.Buffer(t)`` registers it.
"""
from .._tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter (``torch.nn.Parameter``).

    ``Parameter(data)`` shares ``data``'s storage and version counter, like
    ``data.detach()``, and is a leaf that requires grad.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty

            data = empty(0)
        # an instance of ``cls`` around the same array and version counter (no copy)
        param = cls._make(data._data, False, None, 0, data._version_counter)
        param.requires_grad_(requires_grad)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happened in __new__ (Tensor.__init__ would build a new array)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        """A new Parameter with copied values (the ``.grad`` is not copied, as in PyTorch)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._data.copy()), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self.requires_grad))


def _rebuild_parameter(array, requires_grad):
    """Used by ``copy``/``pickle`` to rebuild a Parameter from its array."""
    return Parameter(Tensor._make(array), requires_grad)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for tensors made by ``Buffer(...)`` (PyTorch's trick)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """``torch.nn.Buffer(data, *, persistent=True)``: marks a tensor to be registered as a buffer.

    It returns a plain Tensor (a detached alias of ``data``) tagged so that
    ``module.name = Buffer(t)`` calls ``register_buffer(name, t, persistent)``.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._creation import empty

            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# -- lazy modules: parameters whose shape is known only at the first forward --------
_SHAPE_ERROR = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
    "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
    "`forward` to initialize the parameters before accessing their attributes."
)


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share: no shape yet, ``materialize``."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor its shape (uninitialised values) and turn it into ``cls_to_become``."""
        from .._creation import empty

        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._data = empty(shape, device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim=None):
        raise RuntimeError(_SHAPE_ERROR)

    def __repr__(self):
        return f"<{self.__class__.__name__}>"


def is_lazy(param):
    """``torch.nn.parameter.is_lazy``: is ``param`` an uninitialized parameter or buffer?"""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (``LazyLinear``'s weight before the first forward)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._creation import empty

        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (``LazyBatchNorm1d``'s running statistics)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._creation import empty

        data = empty(0, device=device, dtype=dtype)
        t = cls._make(data._data, requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass
