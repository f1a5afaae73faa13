"""``torch.cuda``: is a GPU there?  edutorch runs ``device="cuda"`` tensors through CuPy.

Random numbers for every device come from the CPU generator (``torch.manual_seed``
seeds them all), so ``torch.cuda.manual_seed`` has nothing of its own to seed:
like PyTorch without CUDA, it is silently ignored.
"""
from .. import backend


def is_available():
    """True when CuPy is installed and finds a GPU."""
    return backend.cuda_is_available()


def device_count():
    """How many GPUs CuPy sees (0 without CuPy or a GPU)."""
    return backend._import_cupy().cuda.runtime.getDeviceCount() if is_available() else 0


def current_device():
    """The index of the current GPU (edutorch uses GPU 0)."""
    backend._import_cupy()
    return 0


def get_device_name(device=None):
    """The GPU's name, as the CUDA runtime reports it."""
    cupy = backend._import_cupy()
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else name


def synchronize(device=None):
    """Wait for the GPU to finish its queued work (timing code calls this)."""
    if is_available():
        backend._import_cupy().cuda.Device(0).synchronize()


def manual_seed(seed):
    """Ignored: CUDA tensors draw from the CPU generator (seed it with ``torch.manual_seed``)."""


def manual_seed_all(seed):
    """Ignored, as ``manual_seed``."""


from . import amp  # noqa: E402  torch.cuda.amp: the deprecated autocast/GradScaler spellings
