"""``scatter``: split a batch across devices; ``gather``: join the per-device outputs.

Both walk tuples, lists and dicts; ``scatter`` gives every device a reference
to any non-tensor, ``gather`` concatenates tensors along ``dim``.
"""
from ..._tensor import Tensor, device as _device


def _cuda(index):
    """The device named by ``index``: a GPU number (-1: the CPU), a string or a device."""
    if isinstance(index, (str, _device)):
        return _device(index)
    return _device("cpu") if index == -1 else _device("cuda", index)


def scatter(inputs, target_gpus, dim=0):
    """One entry per device: each tensor's ``chunk`` along ``dim`` moved there, other objects shared."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(target_gpus), dim)
            return tuple(chunk.to(_cuda(d)) for chunk, d in zip(chunks, target_gpus))
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """``scatter`` positional and keyword inputs alike, padded to the same number of devices."""
    inputs = scatter(inputs, target_gpus, dim) if inputs else []
    kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(inputs) < len(kwargs):
        inputs.extend(() for _ in range(len(kwargs) - len(inputs)))
    elif len(kwargs) < len(inputs):
        kwargs.extend({} for _ in range(len(inputs) - len(kwargs)))
    return tuple(inputs), tuple(kwargs)


def gather(outputs, target_device, dim=0):
    """The per-device ``outputs`` joined on ``target_device``: tensors concatenated along ``dim``."""
    from ... import _functional

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            return _functional.cat([o.to(_cuda(target_device)) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)
