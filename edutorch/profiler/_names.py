"""The names PyTorch's profiler gives to ops and backward nodes.

PyTorch records each operator under its ATen name (``aten::addmm``), each
backward node twice (``autograd::engine::evaluate_function: AddmmBackward0``
around the engine's work for it, ``AddmmBackward0`` around its formula), and a
custom ``autograd.Function`` under its class name.  edutorch's built-in ops
already carry PyTorch's node name (``_backward_name``); the op's name is derived
from it (``AddmmBackward0`` -> ``aten::addmm``).  An op whose node is named after
something else declares its event name beside its forward
(``_profiler_name = "aten::narrow"`` on ``Narrow``, whose node is ``SliceBackward0``),
or, where the name depends on the arguments, a function of them (``Convolution``
is ``aten::conv1d`` or ``aten::conv2d``).

Beneath an op, PyTorch records the ATen ops its implementation calls:
``aten::linear`` calls ``aten::t`` (a view: ``aten::transpose``, then
``aten::as_strided``) and then ``aten::addmm``, which does the work.
:data:`CALLS` lists those calls, as PyTorch 2.13's CPU build records them, for
the ops edutorch computes in one kernel; the profiler opens them around the
op's work (the last call of each list does the work, the others are views that
cost nothing).  Inside an op's kernel nothing else is recorded: the Tensor ops
an edutorch forward may use are its implementation, not ATen calls.
"""
import re

# PyTorch's C++ node for an error raised in backward, not an ATen op (DelayedError's node, "Error")
_NOT_ATEN = {"Error": "DelayedError"}

# The graph nodes that are not made by a Function (PyTorch's C++ names).
_NODE_NAMES = {"AccumulateGrad": "torch::autograd::AccumulateGrad"}

# What PyTorch 2.13's CPU implementation of an op calls, in order; the last call does the work.
CALLS = {
    "aten::linear": ("aten::t", "aten::addmm"),
    "aten::t": ("aten::transpose",),
    "aten::transpose": ("aten::as_strided",),
    "aten::t_": ("aten::transpose_",),
    "aten::conv1d": ("aten::convolution",),
    "aten::conv2d": ("aten::convolution",),
    "aten::convolution": ("aten::_convolution",),
    "aten::_convolution": ("aten::mkldnn_convolution",),
    "aten::max_pool2d": ("aten::max_pool2d_with_indices",),
    "aten::relu": ("aten::clamp_min",),
    "aten::relu_": ("aten::clamp_min_",),
    "aten::log_softmax": ("aten::_log_softmax",),
    "aten::softmax": ("aten::_softmax",),
    "aten::nll_loss": ("aten::nll_loss_forward",),
}

# A backward node whose formula PyTorch computes in ONE ATen kernel, recorded beneath the node;
# edutorch's formula (Tensor ops, so that create_graph records them) is that kernel's implementation.
NODE_KERNELS = {"ConvolutionBackward0": "aten::convolution_backward"}

_cache = {}


def op_name(cls, args=()):
    """The profiler's name for ``cls.apply(*args)``: ``aten::<op>``, or a custom Function's class name."""
    name = _cache.get(cls)
    if name is None:
        name = _derive(cls)
        if callable(name):  # named by its arguments: not cached
            return name(*args)
        _cache[cls] = name
    return name


def inplace_name(cls, args=()):
    """The event of ``x.op_(...)``, computed by ``cls``: PyTorch's in-place op, ``aten::add_``
    (an op that only exists in place, ``aten::zero_``, keeps its name)."""
    name = op_name(cls, args)
    return name if name.endswith("_") else name + "_"


def is_aten(name):
    """Whether an event name is an ATen op's (a built-in op: its kernel records nothing inside)."""
    return name.startswith("aten::")


def _derive(cls):
    declared = cls.__dict__.get("_profiler_name")  # an op whose node is named after another step
    if declared is not None:
        return declared
    backward = cls.__dict__.get("_backward_name")
    if backward is None:  # a user's Function: PyTorch records its class name
        return cls.__name__
    if backward in _NOT_ATEN:
        return _NOT_ATEN[backward]
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
