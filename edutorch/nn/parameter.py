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
