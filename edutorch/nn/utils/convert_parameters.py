"""``parameters_to_vector`` / ``vector_to_parameters``: all weights as one flat vector.

Handy for methods that see the model as a single point in R^n (line
searches, second-order methods, weight averaging, plotting loss landscapes).
"""
from ... import cat
from ..._tensor import Tensor, typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """Flatten and concatenate ``parameters`` into one 1-D tensor (differentiable: ``CatBackward0``)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Copy slices of ``vec`` into ``parameters`` (each ``param.data`` becomes a view of ``vec``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param, old_param_device):
    """All parameters must live on one device: -1 for the CPU, 0 for the GPU."""
    device = 0 if param.device.type == "cuda" else -1
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device
