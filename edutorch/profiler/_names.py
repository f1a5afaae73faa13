"""The names PyTorch's profiler gives to ops and backward nodes.

PyTorch records each operator under its ATen name (``aten::addmm``), each
backward node twice (``autograd::engine::evaluate_function: AddmmBackward0``
around the engine's work for it, ``AddmmBackward0`` around its formula), and a
custom ``autograd.Function`` under its class name.  edutorch's built-in ops
already carry PyTorch's node name (``_backward_name``); the op's name is derived
from it (``AddmmBackward0`` -> ``aten::addmm``), with a table for the ops whose
node is named after something else.
"""
import re

# Function classes whose ``_backward_name`` is not their op's name (by class name).
_OVERRIDES = {
    "Narrow": "aten::narrow",            # node: SliceBackward0
    "Matmul": "aten::matmul",            # node: UnsafeViewBackward0
    "VecMat": "aten::matmul",            # node: SqueezeBackward4
    "MatBatch": "aten::matmul",          # node: CloneBackward0
    "ToDtype": "aten::to",               # node: ToCopyBackward0
    "ToDevice": "aten::to",
    "Fill": "aten::fill_",               # in-place ops: PyTorch's names end in "_"
    "Zero": "aten::zero_",
    "Copy": "aten::copy_",
    "CopySlices": "aten::copy_",
    "IndexPut": "aten::index_put_",
    "LeakyReluInplace": "aten::leaky_relu_",
    "EluInplace": "aten::elu_",
    "MaxPool2d": "aten::max_pool2d",     # node: MaxPool2DWithIndicesBackward0
    "BatchNorm": "aten::batch_norm",     # node: NativeBatchNormBackward0
    "LayerNorm": "aten::layer_norm",     # node: NativeLayerNormBackward0
    "GroupNorm": "aten::group_norm",     # node: NativeGroupNormBackward0
    "WeightNormInterface": "aten::_weight_norm_interface",
    "AdaptiveAvgPool2dBackward": "aten::_adaptive_avg_pool2d_backward",  # a leading "_" in ATen
    "DelayedError": "DelayedError",      # PyTorch's C++ node, not an ATen op
    "_RefusedView": "DelayedError",
}

# ``F.linear``'s own fused Functions: PyTorch's event is the op the user called, ``aten::linear``.
_LINEAR = {("edutorch.nn._functions.linear", "Linear"), ("edutorch.nn._functions.linear", "LinearNoBias")}

# The graph nodes that are not made by a Function (PyTorch's C++ names).
_NODE_NAMES = {"AccumulateGrad": "torch::autograd::AccumulateGrad"}

_cache = {}


def op_name(cls):
    """The profiler's name for ``cls.apply``: ``aten::<op>``, or a custom Function's class name."""
    name = _cache.get(cls)
    if name is None:
        name = _cache[cls] = _derive(cls)
    return name


def _derive(cls):
    if (cls.__module__, cls.__name__) in _LINEAR:
        return "aten::linear"
    if cls.__name__ in _OVERRIDES and cls.__module__.startswith("edutorch."):
        return _OVERRIDES[cls.__name__]
    backward = cls.__dict__.get("_backward_name")
    if backward is None:  # a user's Function: PyTorch records its class name
        return cls.__name__
    return "aten::" + _snake(re.sub(r"Backward\d*(_\w+)?$", "", backward))


def _snake(camel):
    """``AddmmBackward0``'s op ``Addmm`` -> ``addmm``; ``MaxPool2DWithIndices`` ->
    ``max_pool2d_with_indices``; ``Log1P`` -> ``log1p``; ``GeluBackward`` -> ``gelu_backward``."""
    camel = re.sub(r"(\d)([A-Z])(?=[A-Z]|$)", lambda m: m.group(1) + m.group(2).lower(), camel)
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", camel).lower()


def node_name(node):
    """A backward node's event name: its ``name()`` (``AddmmBackward0``), or PyTorch's C++ name."""
    name = node.name()
    return _NODE_NAMES.get(name, name)
