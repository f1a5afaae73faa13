"""A stand-in for CuPy that fails where real CuPy fails, so CI can test ``"cuda"``.

No GPU is needed.  Arrays "on the device" are :class:`ndarray` objects that wrap a
NumPy array and behave like ``cupy.ndarray`` in the ways that break CPU-only code:

* implicit conversion to NumPy (``np.asarray(x)``, ``np.array([x, ...])``,
  ``float`` of a non-scalar...) raises CuPy's ``TypeError``: only ``x.get()``
  (or ``cupy.asnumpy``) brings values back to the host;
* a CuPy function, method or operator given a NumPy array raises CuPy's
  ``TypeError`` (``cupy.add(gpu, cpu)``, ``gpu + cpu_array``), as the real one does;
* NumPy functions and ufuncs called on device arrays dispatch to "CuPy" (real
  CuPy implements ``__array_ufunc__`` and ``__array_function__``), as long as no
  host array is mixed in.

The module-level functions (``cupy.exp``, ``cupy.zeros``, ``cupy.random``...) are
NumPy's, run on the unwrapped arrays, with results wrapped again.  Install it
with the ``fake_cuda`` fixture (``tests/conftest.py``); ``edutorch.backend`` then
treats it as CuPy.
"""
import sys
import types

import numpy as np

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")


def _host_array_error(value):
    return TypeError(f"Unsupported type {type(value)}")


def unwrap(value, *, allow_host=False):
    """The NumPy array behind a device array; refuses host arrays like CuPy does."""
    if isinstance(value, ndarray):
        return value._array
    if isinstance(value, np.ndarray) and not allow_host:
        raise _host_array_error(value)
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(v, allow_host=allow_host) for v in value)
    if isinstance(value, dict):  # keyword arguments: out=, where=, ...
        return {k: unwrap(v, allow_host=allow_host) for k, v in value.items()}
    return value


def wrap(value):
    """Wrap NumPy results as device arrays (NumPy scalars become 0-d arrays, as in CuPy)."""
    if isinstance(value, np.ndarray):
        return ndarray(value)
    if isinstance(value, np.generic):
        return ndarray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(wrap(v) for v in value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


class ndarray(np.lib.mixins.NDArrayOperatorsMixin):
    """A "device" array: a NumPy array that refuses to be used as one implicitly."""

    __array_priority__ = 2000

    def __init__(self, array):
        self._array = array

    # -- what real CuPy refuses -------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(IMPLICIT)

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (wrap(row) for row in self._array)

    # -- device side -------------------------------------------------------------
    @property
    def __cuda_array_interface__(self):
        return {"shape": self._array.shape, "typestr": self._array.dtype.str, "version": 3,
                "strides": self._array.strides, "data": (self._array.__array_interface__["data"][0], False)}

    @property
    def device(self):
        return Device(0)

    def get(self):
        """Copy to the host: the one explicit way back to NumPy."""
        return self._array.copy()

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        args = [unwrap(x) for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(unwrap(o) for o in out)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        return wrap(func(*unwrap(args), **unwrap(kwargs)))

    # -- ndarray attributes and methods, run on the wrapped array ---------------
    def __getattr__(self, name):
        if name.startswith("__"):  # no __array_interface__ etc.: NumPy must not see the host array
            raise AttributeError(name)
        attr = getattr(self._array, name)
        if not callable(attr):
            return wrap(attr) if isinstance(attr, np.ndarray) and attr.base is not None else attr

        def method(*args, **kwargs):
            return wrap(attr(*unwrap(args), **unwrap(kwargs)))

        return method

    @property
    def T(self):
        return ndarray(self._array.T)

    @property
    def mT(self):
        return ndarray(np.swapaxes(self._array, -1, -2))

    @property
    def real(self):
        return ndarray(self._array.real)

    @property
    def flat(self):
        raise TypeError("edutorch stand-in: cupy.ndarray.flat is an iterator over device memory")

    def __getitem__(self, key):
        return wrap(self._array[unwrap(key, allow_host=True)])

    def __setitem__(self, key, value):
        self._array[unwrap(key, allow_host=True)] = unwrap(value, allow_host=True)

    def __len__(self):
        return len(self._array)

    def __bool__(self):
        return bool(self._array)

    def __float__(self):
        return float(self._array)

    def __int__(self):
        return int(self._array)

    def __index__(self):
        return self._array.__index__()

    def __repr__(self):
        return f"array({self._array!r}, device=fake-cuda)"

    def __copy__(self):
        return ndarray(self._array.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._array.copy())


class Device:
    def __init__(self, id):
        self.id = id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _function(name, numpy_function):
    def function(*args, **kwargs):
        return wrap(numpy_function(*unwrap(args), **unwrap(kwargs)))

    function.__name__ = name
    return function


class ufunc:
    """``cupy.ufunc``: called, or through ``.at``/``.reduce``/``.accumulate``/``.outer``."""

    def __init__(self, numpy_ufunc):
        self._ufunc = numpy_ufunc
        self.__name__ = numpy_ufunc.__name__

    def __call__(self, *args, **kwargs):
        return _function(self.__name__, self._ufunc)(*args, **kwargs)

    def __getattr__(self, name):
        return _function(f"{self.__name__}.{name}", getattr(self._ufunc, name))


def asarray(a, dtype=None, order=None):
    """``cupy.asarray``: host data is copied to the device (the explicit way in)."""
    return ndarray(np.array(unwrap(a, allow_host=True), dtype=dtype, order=order))


def array(a, dtype=None, copy=True, order="K", ndmin=0):
    return ndarray(np.array(unwrap(a, allow_host=True), dtype=dtype, copy=copy, order=order, ndmin=ndmin))


def asnumpy(a):
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def get_array_module(*arrays):
    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in arrays) else np


class _Namespace(types.ModuleType):
    """A submodule (``cupy.random``, ``cupy.linalg``) whose functions are NumPy's, wrapped."""

    def __init__(self, name, numpy_namespace):
        super().__init__(name)
        self._numpy = numpy_namespace

    def __getattr__(self, name):
        attr = getattr(self._numpy, name)
        return _function(name, attr) if callable(attr) and not isinstance(attr, type) else attr


random = _Namespace("cupy.random", np.random)
linalg = _Namespace("cupy.linalg", np.linalg)
fft = _Namespace("cupy.fft", np.fft)
cuda = types.SimpleNamespace(
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1),
    Device=Device,
)

# dtypes and constants are NumPy's, as in CuPy
_PASS_THROUGH = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                 "bool_", "dtype", "inf", "nan", "pi", "e", "newaxis", "integer", "floating",
                 "generic", "number", "issubdtype", "result_type", "promote_types", "can_cast",
                 "iinfo", "finfo", "errstate", "ndim", "shape", "isscalar"}


def __getattr__(name):
    attr = getattr(np, name)
    if name in _PASS_THROUGH or isinstance(attr, type) or not callable(attr):
        return attr
    if isinstance(attr, np.ufunc):
        return ufunc(attr)
    return _function(name, attr)
