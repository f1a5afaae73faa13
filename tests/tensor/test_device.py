"""Devices: "cpu" is NumPy, "cuda" is CuPy (lazily imported).

No GPU is needed: without CuPy, asking for CUDA is an AssertionError (PyTorch's) with the
install hint; mixing devices is checked with a stand-in "GPU array" class
that only pretends to live on the GPU (edutorch tells devices apart by the
array type, as Chainer's ``get_array_module`` does).
"""
import importlib.util

import numpy as np
import pytest

import edutorch as et
from edutorch import backend

HAS_CUPY = importlib.util.find_spec("cupy") is not None
MIXED = "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!"


class FakeCudaArray:
    """Just enough of a CuPy array for edutorch's device checks."""

    __cuda_array_interface__ = {}

    def __init__(self, array):
        self._array = np.asarray(array)
        self.shape, self.dtype, self.ndim, self.size = (
            self._array.shape, self._array.dtype, self._array.ndim, self._array.size)

    def get(self):
        return self._array


def fake_cuda_tensor(values):
    return et.Tensor._make(FakeCudaArray(np.asarray(values, dtype=np.float32)))


@pytest.mark.skipif(HAS_CUPY, reason="CuPy is installed: the missing-CuPy error cannot be shown")
@pytest.mark.parametrize("ask", [
    lambda: et.ones(2).cuda(), lambda: et.ones(2).to("cuda"), lambda: et.ones(2).to(et.device("cuda:0")),
    lambda: et.zeros(2, device="cuda"), lambda: et.tensor([1.0], device="cuda"), lambda: et.randn(2, device="cuda"),
])
def test_cuda_without_cupy_says_how_to_install_it(ask):
    """PyTorch built without CUDA raises ``AssertionError: Torch not compiled with CUDA enabled``."""
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled: .*CuPy") as info:
        ask()
    assert "pip install" in str(info.value)
    assert backend.cuda_is_available() is False


@pytest.mark.skipif(HAS_CUPY, reason="CuPy is installed: the missing-CuPy error cannot be shown")
def test_cuda_without_cupy_is_the_error_of_pytorch_without_cuda():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    if torch.cuda.is_available():
        pytest.skip("this PyTorch has CUDA: its no-CUDA error cannot be shown")
    for lib in (et, torch):
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
            lib.zeros(2).to("cuda")
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
            lib.nn.Linear(2, 2, device="cuda")


def test_mixing_devices_is_pytorchs_error():
    cpu, gpu = et.ones(2), fake_cuda_tensor([1.0, 2.0])
    assert gpu.device == et.device("cuda", 0) and gpu.is_cuda and not cpu.is_cuda
    for mix in (lambda: cpu + gpu, lambda: cpu * gpu, lambda: cpu - gpu, lambda: cpu / gpu,
                lambda: cpu == gpu, lambda: et.maximum(cpu, gpu), lambda: et.where(cpu > 0, cpu, gpu),
                lambda: et.cat([cpu, gpu]), lambda: et.stack([cpu, gpu]), lambda: cpu @ gpu,
                lambda: cpu.reshape(1, 2) @ gpu):
        with pytest.raises(RuntimeError) as info:
            mix()
        assert str(info.value) == MIXED
    with pytest.raises(RuntimeError) as info:
        gpu + cpu
    assert str(info.value) == MIXED.replace("cpu and cuda:0", "cuda:0 and cpu")


def test_cuda_tensor_repr_names_its_device():
    assert repr(fake_cuda_tensor([1.0, 2.0])) == "tensor([1., 2.], device='cuda:0')"


def test_to_same_device_or_dtype_returns_self_like_torch():
    x = et.ones(2)
    assert x.to("cpu") is x and x.cpu() is x and x.to(et.float32) is x and x.to("cpu", et.float32) is x
    assert x.to(et.device("cpu")) is x and x.to(x) is x
    y = x.to(et.float64)
    assert y is not x and y.dtype == et.float64 and y.device == "cpu"


def test_device_objects_print_like_torch():
    assert repr(et.device("cpu")) == "device(type='cpu')"
    assert repr(et.device("cuda:0")) == "device(type='cuda', index=0)"
    assert repr(et.device("cuda")) == "device(type='cuda')"
    assert str(et.device("cuda", 1)) == "cuda:1"
    assert et.ones(1).device == "cpu" and et.ones(1).device == et.device("cpu")
    with pytest.raises(RuntimeError, match="device type at start of device string: tpu"):
        et.device("tpu")


def test_array_module_follows_the_data():
    assert backend.get_array_module(np.ones(2)) is np
    assert backend.device_of(np.ones(2)) == "cpu"
    assert backend.device_of(FakeCudaArray([1.0])) == "cuda"
    a = np.ones(2)
    assert backend.to_device(a, "cpu") is a  # no copy when the device does not change
