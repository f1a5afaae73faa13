"""New tensors from this one and conversions: ``clone``, ``to``, ``float()``, ``cuda()``, ``new_zeros``, ``nbytes``...

``to``/``clone`` are differentiable (``autograd/_functions/tensor.py``):
the gradient of a cast or a device move is cast or moved back.
"""
import copy

from .. import _dtype
from ..autograd import grad_mode
from ..autograd._functions import utils
from ..autograd._functions.tensor import Clone, Contiguous, ToDevice, ToDtype


class ConversionMethods:
    """Mixed into ``Tensor`` (the topic is in the module docstring)."""

    __slots__ = ()

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        from .. import _creation

        return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                                requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        from .. import _creation

        return _creation.zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        from .. import _creation

        return _creation.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        from .. import _creation

        return _creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        from .. import _creation

        return _creation.empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    def clone(self):
        return Clone.apply(self)

    def __deepcopy__(self, memo):
        """``copy.deepcopy(t)``: PyTorch copies only a leaf (a tensor no recorded op made).

        A module whose attribute is computed by an op (a pruned or weight-normed
        ``weight``, recomputed by a forward pre-hook) cannot be deep-copied either,
        as in PyTorch.  A leaf is copied field by field: its values, ``.grad``,
        version and the attributes a user set.
        """
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                "the moment.  If you were attempting to deepcopy a module, this may be because of a "
                "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name in ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter"):
            setattr(new, name, copy.deepcopy(getattr(self, name), memo))  # values, .grad and version
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))  # attributes a user set (t.foo = ...)
        return new

    def contiguous(self):
        if self._data.flags.c_contiguous:
            return self
        return Contiguous.apply(self)

    def is_contiguous(self):
        return bool(self._data.flags.c_contiguous)

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``."""
        dtype, device = kwargs.get("dtype"), kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, utils._Tensor):
                dtype, device = a.dtype, a.device
            elif a is not None:
                device = a
        out = self
        if device is not None and str(device).split(":")[0] != self.device.type:
            out = ToDevice.apply(out, str(device).split(":")[0])
        if dtype is not None and out._data.dtype != dtype.np:
            out = ToDtype.apply(out, dtype)
        return out

    def type_as(self, other):
        return self.to(other.dtype)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def bfloat16(self):
        return self.to(_dtype.bfloat16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def short(self):
        return self.to(_dtype.int16)

    def char(self):
        return self.to(_dtype.int8)

    def byte(self):
        return self.to(_dtype.uint8)

    def bool(self):
        return self.to(_dtype.bool)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda")

    @property
    def itemsize(self):
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self):
        """Bytes of all elements."""
        return self._data.nbytes

    @property
    def is_cpu(self):
        return not self.is_cuda

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is."""
        return self._output_nr

    def get_device(self):
        """-1 on the CPU, the GPU index on CUDA."""
        return -1 if not self.is_cuda else 0

    def is_signed(self):
        return self._data.dtype.kind in "if"

    def is_inference(self):
        """True for a tensor made inside ``inference_mode`` (or a view of one): see
        ``grad_mode.InferenceVersionCounter``."""
        return type(self._version_counter) is grad_mode.InferenceVersionCounter

    def is_same_size(self, other):
        return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self):
        """The truth of a one-element tensor (``bool(t)``)."""
        return bool(self)
