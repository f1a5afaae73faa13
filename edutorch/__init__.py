"""edutorch: PyTorch's API on NumPy, written to be read.

``import edutorch as torch`` and ordinary CPU PyTorch code about tensors,
autograd, modules, optimizers and ``torch.nn.utils`` runs unchanged.
"""
from . import _dtype, backend
from ._dtype import (
    bfloat16, bool, double, dtype, finfo, float, float16, float32, float64, get_default_dtype, half, iinfo, int,
    int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short, uint8,
)
from ._tensor import Size, Tensor, device, typename
from ._creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
    ones_like, tensor, zeros, zeros_like,
)
from ._creation import get_default_device, set_default_device
from ._tensor_str import set_printoptions
from .random import (
    Generator, bernoulli, default_generator, get_rng_state, initial_seed, manual_seed, multinomial,
    normal, rand, rand_like, randint, randint_like, randn, randn_like, randperm, seed, set_rng_state,
)
from . import autograd
from . import _meta  # noqa: F401  (the meta device: registers with backend, hooks into autograd)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from ._functional import *  # noqa: F401,F403  (torch.add, torch.exp, torch.cat, ...)
from . import return_types
from ._linalg_functional import *  # noqa: F401,F403  (torch.triu, torch.dist, ...)
from ._functional_api import *  # noqa: F401,F403  (torch.erf, torch.roll, torch.vstack, ...)
from .functional import (  # torch.functional: ops written on top of other ops
    broadcast_shapes, broadcast_tensors, cdist, einsum, meshgrid, tensordot, unique,
)
from . import functional
from . import linalg  # torch.linalg

from .serialization import load, save
from . import nn
from ._functional_more import *  # noqa: F401,F403,E402  (torch.relu_, torch.frac, torch.conv2d, ...)
from . import optim, utils  # torch.optim, torch.utils.data
from . import fx, multiprocessing  # torch.fx, torch.multiprocessing
from . import func  # torch.func: grad, vmap, functional_call...
from . import testing  # torch.testing.assert_close
from .func import vmap
from . import profiler  # torch.profiler
from .autograd import profiler as _autograd_profiler  # makes torch.autograd.profiler
from .autograd import functional as _autograd_functional  # makes torch.autograd.functional
del _autograd_functional
from . import accelerator, backends, cuda  # is there a GPU? (CuPy)
from . import amp, cpu  # torch.amp: autocast and GradScaler (torch.cpu: only its deprecated amp)
from .amp import GradScaler, autocast
from .amp.autocast_mode import (
    autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache, get_autocast_cpu_dtype,
    get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled, is_autocast_cpu_enabled,
    is_autocast_enabled, set_autocast_cache_enabled, set_autocast_cpu_dtype, set_autocast_cpu_enabled,
    set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype,
)

__version__ = "0.1.0"


from ._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch", "edutorch")  # out-of-scope names say why
