"""edutorch: PyTorch's API on NumPy, written to be read.

``import edutorch as torch`` and ordinary CPU PyTorch code about tensors,
autograd, modules, optimizers and ``torch.nn.utils`` runs unchanged.
"""
from . import _dtype, backend
from ._dtype import (
    bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int,
    int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short, uint8,
)
from ._tensor import Size, Tensor, device
from ._creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones,
    ones_like, tensor, zeros, zeros_like,
)
from .random import (
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, normal, rand, randint,
    randn, randperm, seed, set_rng_state,
)
from . import autograd
from .autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from ._functional import *  # noqa: F401,F403  (torch.add, torch.exp, torch.cat, ...)
from . import return_types
from ._linalg_functional import *  # noqa: F401,F403  (torch.triu, torch.dist, ...)
from . import linalg  # torch.linalg

from .serialization import load, save
from . import nn
from . import optim, utils  # torch.optim, torch.utils.data
from . import fx, multiprocessing  # torch.fx, torch.multiprocessing
from .autograd import functional as _autograd_functional  # makes torch.autograd.functional
del _autograd_functional

__version__ = "0.1.0"
