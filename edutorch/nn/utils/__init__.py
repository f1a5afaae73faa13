"""``torch.nn.utils``: gradient clipping, parameter vectors, pruning, weight/spectral norm."""
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import fusion, parametrizations, parametrize, prune
from .init import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm


from ..._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.nn.utils", "edutorch.nn.utils")  # out-of-scope names say why
