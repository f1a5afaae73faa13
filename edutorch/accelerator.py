"""``torch.accelerator``: the device-agnostic way tutorials pick a device.

``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``
gives ``"cuda"`` when CuPy finds a GPU, else ``"cpu"``.
"""
from . import cuda


def is_available():
    """True when an accelerator (for edutorch: a CuPy GPU) is usable."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """``device(type='cuda')`` when a GPU is there; else None (as PyTorch on a CPU-only machine)."""
    from ._tensor import device

    return device("cuda") if cuda.is_available() else None


def device_count():
    return cuda.device_count()
